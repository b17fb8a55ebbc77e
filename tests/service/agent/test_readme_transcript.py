"""The README's ``agrag ask`` transcript is what the CLI prints for its scripted LLM on the example corpus.

The script is the one the README names: a graph search, a fetch of two passages, a draft with an uncited figure,
and (after the check's repair request) a navigate to the passage before the timeline and a draft citing it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agrag.service.cli import app
from tests.support.scripted_tool_llm import Call, Reply, scripted_tool_llm, tool_results

README = Path(__file__).resolve().parents[3] / "README.md"
QUESTION = "Which incident involved the planner that Maria Chen wrote?"
COMMAND = f'$ agrag ask "{QUESTION}" --trace'
TIMINGS = re.compile(r"\d+ ms|\d+\.\d s")


def heading_hit(hits: list[dict[str, Any]], *words: str) -> str:
    """The id of the first hit whose heading path holds every word."""
    return next(h["id"] for h in hits if all(w in " > ".join(h["location"]["heading_path"]) for w in words))


def draft(author: str, timeline: str, summary: str | None) -> str:
    last = "About thirty robots stopped moving for 22 minutes" + (f" [{summary}]." if summary else ".")
    return (
        f"Maria Chen wrote the Orion Planner in 2023 [{author}]. It was at the centre of Incident 2024-03, the "
        f"replanning storm in Lyon: it kept closing and reopening the same aisle segment [{timeline}]. {last}"
    )


def transcript_script(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
    results = tool_results(messages)
    if not results:
        return Reply(calls=(Call("search_evidence", {"query": QUESTION, "mode": "graph", "limit": 5}),))
    hits = results[0]["hits"]
    author, timeline = heading_hit(hits, "History and Authorship"), heading_hit(hits, "Incident 2024-03", "Timeline")
    if len(results) == 1:
        return Reply(calls=(Call("fetch_evidence", {"ids": [author, timeline]}),))
    if not any(m["role"] == "user" and "citation check found problems" in m["content"] for m in messages):
        return Reply(text=draft(author, timeline, None))
    if len(results) == 2:
        return Reply(calls=(Call("navigate", {"id": timeline, "direction": "previous"}),))
    return Reply(text=draft(author, timeline, results[2]["items"][0]["id"]))


def readme_block() -> list[str]:
    text = README.read_text(encoding="utf-8")
    block = text.split(COMMAND + "\n", 1)[1].split("\n```", 1)[0]
    return block.splitlines()


def test_the_readme_transcript_is_what_agrag_ask_prints(monkeypatch: pytest.MonkeyPatch, agent_data_dir: Path) -> None:
    with scripted_tool_llm(transcript_script) as llm:
        env = {"AGRAG_DATA_DIR": str(agent_data_dir), "AGRAG_LLM_BASE_URL": llm.base_url, "COLUMNS": "200"}
        result = CliRunner().invoke(app, ["ask", QUESTION, "--trace"], env=env)
    assert result.exit_code == 0, result.output
    printed = [TIMINGS.sub("<t>", line) for line in result.output.rstrip("\n").splitlines()]
    assert printed == [TIMINGS.sub("<t>", line) for line in readme_block()], "\n" + result.output
    repair = llm.requests[3]["messages"][-1]["content"]
    assert 'cites nothing: "About thirty robots stopped moving for 22 minutes."' in repair
