"""``agrag ask`` against a real ``agrag serve`` subprocess: the CLI becomes its client and prints what it prints
in-process (timings aside), read through a pipe; the server's LLM settings are the ones that count."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from prefect.settings import PREFECT_API_URL
from typer.testing import CliRunner

from agrag.service.cli import app
from tests.service.agent.conftest import QUESTION, answering
from tests.service.client.test_cli_client import AGRAG
from tests.service.conftest import copy_corpus
from tests.service.server.test_serve_command import Serve, serve_env
from tests.support.scripted_tool_llm import scripted_tool_llm

TIMINGS = re.compile(r"\d+ ms|\d+\.\d s")


def without_timings(text: str) -> str:
    return TIMINGS.sub("<t>", text)


def client_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a CLI run on ``data_dir`` with none of the developer's agrag settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_"))}
    return {**env, "AGRAG_DATA_DIR": str(data_dir), "COLUMNS": "200", **extra}


def ask_piped(env: dict[str, str], *options: str) -> subprocess.CompletedProcess[str]:
    """``agrag ask QUESTION`` in its own process, its output read through a pipe."""
    return subprocess.run(
        [AGRAG, "ask", QUESTION, *options], env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_ask_through_a_running_server_prints_what_it_prints_in_process(ingested_corpus: Path, tmp_path: Path) -> None:
    data_dir = copy_corpus(ingested_corpus, tmp_path)
    with scripted_tool_llm(answering) as llm:
        in_process = CliRunner().invoke(
            app, ["ask", QUESTION, "--trace"], env=client_env(data_dir, AGRAG_LLM_BASE_URL=llm.base_url)
        )
        assert in_process.exit_code == 0, in_process.output
        served_requests = len(llm.requests)

        env = serve_env(data_dir, AGRAG_LLM_BASE_URL=llm.base_url, PREFECT_API_URL=str(PREFECT_API_URL.value()))
        server = Serve(data_dir, "--deployment", "", env=env)
        try:
            server.started()
            # the client has no LLM settings of its own: the server's endpoint answers
            piped = ask_piped(client_env(data_dir), "--trace")
            as_json = ask_piped(client_env(data_dir), "--json")
        finally:
            code = server.stop(signal.SIGTERM)
    assert code == 0, server.stderr
    assert piped.returncode == 0, piped.stderr
    assert len(llm.requests) == 3 * served_requests  # the two served runs went to the server's LLM
    assert without_timings(piped.stdout) == without_timings(in_process.output)
    assert "Maria Chen owns the Orion Planner [1].\n\nSources:\n[1] Orion Planner Design Notes > " in piped.stdout
    assert "\x1b[" not in piped.stdout, "no terminal codes in a pipe"
    assert as_json.returncode == 0, as_json.stderr
    assert '"status": "answered"' in as_json.stdout and '"name": "fetch_evidence"' in as_json.stdout


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_a_server_without_an_llm_refuses_the_question_with_the_setting(ingested_corpus: Path, tmp_path: Path) -> None:
    data_dir = copy_corpus(ingested_corpus, tmp_path)
    server = Serve(data_dir, "--deployment", "", env=serve_env(data_dir, PREFECT_API_URL=str(PREFECT_API_URL.value())))
    try:
        server.started()
        # the client's own LLM setting is not used: the server answers for the data dir
        refused = ask_piped(client_env(data_dir, AGRAG_LLM_BASE_URL="http://127.0.0.1:9/v1"))
    finally:
        server.stop(signal.SIGTERM)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "AGRAG_LLM_BASE_URL" in refused.stderr and "Traceback" not in refused.stderr
