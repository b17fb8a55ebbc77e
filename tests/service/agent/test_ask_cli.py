"""``agrag ask`` on the command line: the answer with its sources, the trace, and the typed errors (no LLM, a
failing LLM, an unknown document) without a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agrag.service.cli import app
from tests.service.agent.conftest import QUESTION, answering
from tests.support.scripted_tool_llm import scripted_tool_llm


def agrag(monkeypatch: pytest.MonkeyPatch, data_dir: Path, *args: str, **env: str) -> tuple[int, str]:
    monkeypatch.setenv("AGRAG_DATA_DIR", str(data_dir))
    monkeypatch.setenv("COLUMNS", "200")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(app, ["ask", *args])
    return result.exit_code, result.output


def test_ask_prints_the_answer_its_sources_and_the_trace(monkeypatch: pytest.MonkeyPatch, agent_data_dir: Path) -> None:
    with scripted_tool_llm(answering) as llm:
        code, output = agrag(monkeypatch, agent_data_dir, QUESTION, "--trace", AGRAG_LLM_BASE_URL=llm.base_url)
    assert code == 0, output
    lines = output.splitlines()
    assert lines[0].startswith('→ search_evidence {"query": "Who owns the Orion Planner?", "limit": 3} → ')
    assert lines[1].startswith('→ fetch_evidence {"ids": ["')
    assert lines[2].startswith("→ check_citations (loop) ") and lines[3].startswith("→ render_citations (loop) ")
    assert "Maria Chen owns the Orion Planner [1].\n\nSources:\n[1] Orion Planner Design Notes > " in output
    assert lines[-1].startswith("[answered] 2 tool calls by the model, 3 LLM calls, 45 tokens, ")


def test_ask_without_an_llm_exits_2_naming_the_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    code, output = agrag(monkeypatch, tmp_path / "nothing", QUESTION)
    assert code == 2
    assert "AGRAG_LLM_BASE_URL=http://localhost:11434/v1" in output and "ollama pull" in output
    assert "Traceback" not in output


def test_a_failing_llm_is_reported_without_a_traceback(monkeypatch: pytest.MonkeyPatch, agent_data_dir: Path) -> None:
    with scripted_tool_llm(answering, fail_first=100) as llm:
        code, output = agrag(
            monkeypatch, agent_data_dir, QUESTION, AGRAG_LLM_BASE_URL=llm.base_url, AGRAG_LLM_MAX_RETRIES="1"
        )
    assert code == 1
    assert output.startswith(f"Error: The LLM at {llm.base_url} failed after 1 retries")
    assert "Traceback" not in output and len(llm.requests) == 0


def test_an_unknown_document_is_refused(monkeypatch: pytest.MonkeyPatch, agent_data_dir: Path) -> None:
    with scripted_tool_llm(answering) as llm:
        code, output = agrag(
            monkeypatch, agent_data_dir, QUESTION, "--document", "d0123456789abcde", AGRAG_LLM_BASE_URL=llm.base_url
        )
    assert code != 0 and "d0123456789abcde" in output and not llm.requests
