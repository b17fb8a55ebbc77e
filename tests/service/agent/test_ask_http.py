"""``POST /v1/ask`` on a real server: tool calls streamed as they happen, then the answer; the token's scope applies
to every tool call; no LLM is refused before the stream starts."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.errors import UnknownDocumentIdError
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from agrag.service.client.server_client import ServerClient
from agrag.service.server.server_file import ServerInfo
from tests.service.agent.conftest import QUESTION, OpenAgentRuntime, answering
from tests.service.agent.test_agent_scope import SCOPE
from tests.support.scripted_tool_llm import scripted_tool_llm
from tests.support.served_api import uvicorn_in_thread

TOKEN = "team-token-0123456789abcdef0"


def events(url: str, question: str) -> tuple[int, list[dict[str, Any]]]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with (
        httpx.Client(base_url=url, headers=headers, timeout=60) as client,
        client.stream("POST", "/v1/ask", json={"question": question}) as response,
    ):
        if response.status_code != 200:
            response.read()
            return response.status_code, [response.json()]
        assert response.headers["content-type"].startswith("application/x-ndjson")
        return 200, [json.loads(line) for line in response.iter_lines() if line]


def test_ask_streams_each_tool_call_then_the_answer_within_the_scope(agent_runtime: OpenAgentRuntime) -> None:
    access = AccessPolicy([ApiToken("team", TOKEN, SCOPE)])
    with (
        scripted_tool_llm(answering) as llm,
        agent_runtime(llm.base_url) as runtime,
        uvicorn_in_thread(create_app(runtime, access, warm_up=False)) as url,
    ):
        status, received = events(url, QUESTION)
    assert status == 200
    assert [(e["event"], e.get("name"), e.get("caller")) for e in received] == [
        ("tool_call", "search_evidence", "model"),
        ("tool_call", "fetch_evidence", "model"),
        ("tool_call", "check_citations", "loop"),
        ("tool_call", "render_citations", "loop"),
        ("answer", None, None),
    ]
    fetched = received[1]["arguments"]["ids"][0]
    assert fetched.split(".")[0] in SCOPE  # the search ran within the token's documents
    answer = received[-1]
    assert answer["status"] == "answered" and answer["text"].startswith("Maria Chen owns the Orion Planner [1].")
    assert [source["id"] for source in answer["sources"]] == [fetched]


def test_ask_without_an_llm_is_refused_before_the_stream(agent_runtime: OpenAgentRuntime) -> None:
    access = AccessPolicy([ApiToken("team", TOKEN, SCOPE)])
    with agent_runtime(None) as runtime, uvicorn_in_thread(create_app(runtime, access, warm_up=False)) as url:
        status, received = events(url, QUESTION)
    assert status == 502 and "AGRAG_LLM_BASE_URL" in received[0]["message"]


def test_the_cli_client_reads_the_stream_and_narrows_the_scope(agent_runtime: OpenAgentRuntime, tmp_path: Path) -> None:
    admin = "admin-token-0123456789abcdef"
    access = AccessPolicy([ApiToken("team", TOKEN, SCOPE), ApiToken("admin", admin)])
    team = document_id_for("team.md", "acme_notes")
    with (
        scripted_tool_llm(answering) as llm,
        agent_runtime(llm.base_url) as runtime,
        uvicorn_in_thread(create_app(runtime, access, warm_up=False)) as url,
        ServerClient(ServerInfo(url, os.getpid(), "now", admin), TOKEN, tmp_path) as client,
        ServerClient(ServerInfo(url, os.getpid(), "now", admin), admin, tmp_path) as unscoped,
    ):
        received = list(client.ask(QUESTION, [team]))
        with pytest.raises(UnknownDocumentIdError):
            list(unscoped.ask(QUESTION, ["d0123456789abcde"]))
    assert [e["event"] for e in received] == ["tool_call"] * 4 + ["answer"]
    assert received[1]["arguments"]["ids"][0].split(".")[0] == team
    assert received[-1]["status"] == "answered"
