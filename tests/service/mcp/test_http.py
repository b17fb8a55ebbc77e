"""The /mcp endpoint of `agrag serve` on a real uvicorn server, driven by the MCP SDK's streamable HTTP client."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.pipelines.runtime import open_runtime
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from agrag.service.server.server_file import remove_server_file, write_server_file
from tests.service.conftest import settings_of
from tests.service.mcp.conftest import ADMIN, AGRAG, QUESTION, TEAM, call, client, refused, stdio_parameters
from tests.support.served_api import uvicorn_in_thread

PLANNER = "planner-token-0123456789abcd"
TEAM_DOCS = tuple(sorted(document_id_for(name, "acme_notes") for name in ("team.md", "sites.csv")))
PLANNER_DOCS = tuple(sorted(document_id_for(name, "acme_notes") for name in ("orion_planner.md", "incidents.md")))
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def mcp_url(mcp_data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[str]:
    """The URL of /mcp; the server file names the server (as `agrag serve` writes it) with the admin token."""
    # `agrag serve`'s app over the corpus copy, with an admin token and two tokens scoped to other documents.
    access = AccessPolicy(
        [ApiToken("admin", ADMIN), ApiToken("team", TEAM, TEAM_DOCS), ApiToken("planner", PLANNER, PLANNER_DOCS)]
    )
    with (
        open_runtime([], settings_of(mcp_data_dir), embedder=embedder) as runtime,
        uvicorn_in_thread(create_app(runtime, access, warm_up=False)) as url,
    ):
        write_server_file(mcp_data_dir, url, ADMIN)
        try:
            yield f"{url}/mcp"
        finally:
            remove_server_file(mcp_data_dir)


async def evidence_of(session: ClientSession, query: str) -> dict[str, Any]:
    """What one client sees: its search hits, what it fetched, its entities and its documents."""
    found = await call(session, "search_evidence", {"query": query, "limit": 10})
    ids = [hit["id"] for hit in found["hits"]]
    fetched = await call(session, "fetch_evidence", {"ids": ids[:3]}) if ids else {"items": []}
    entities = await call(session, "find_entities", {"query": query, "limit": 10})
    documents = await call(session, "list_documents")
    graph = await call(session, "search_evidence", {"query": query, "mode": "graph", "limit": 5})
    explored = await call(session, "explore", {"entity": "Orion Planner", "depth": 2})
    near = await call(session, "navigate", {"id": ids[0], "direction": "next"}) if ids else {"items": []}
    status = await call(session, "status")
    return {
        "hits": ids + [hit["id"] for hit in graph["hits"]] + [item["id"] for item in near["items"]],
        "fetched": [item["id"] for item in fetched["items"]],
        "passages": [p for entity in entities["result"] for p in entity["passages"]]
        + [p for edge in explored["edges"] for p in edge["passages"]],
        "documents": sorted(d["id"] for d in documents["result"]),
        "status_documents": status["documents"],
    }


async def test_two_clients_with_different_scopes_see_nothing_of_each_other(mcp_url: str) -> None:
    seen: dict[str, dict[str, Any]] = {}
    query = "Who owns the Orion Planner and which incidents hit it?"

    async def use(name: str, token: str) -> None:
        async with client(mcp_url, token) as session:
            seen[name] = await evidence_of(session, query)
            other = "planner" if name == "team" else "team"
            while other not in seen:  # both sessions stay open until each has read
                await anyio.sleep(0.05)
            foreign = seen[other]["fetched"][:1]
            assert foreign, f"{other} fetched nothing"
            result = await call(session, "fetch_evidence", {"ids": foreign})
            assert result["items"] == [] and result["not_found"] == foreign, "another scope's evidence is not found"
            check = await call(session, "check_citations", {"answer": f"It is so [{foreign[0]}]."})
            assert check["grounded"] is False and [i["id"] for i in check["invalid"]] == foreign

    async with anyio.create_task_group() as group:
        group.start_soon(use, "team", TEAM)
        group.start_soon(use, "planner", PLANNER)
    for name, scope in (("team", TEAM_DOCS), ("planner", PLANNER_DOCS)):
        assert seen[name]["documents"] == list(scope) and seen[name]["status_documents"] == len(scope)
        ids = seen[name]["hits"] + seen[name]["fetched"] + seen[name]["passages"]
        assert ids and all(i.split(".")[0] in scope for i in ids), f"{name} saw evidence outside its documents"


async def test_each_connection_has_its_own_ledger_even_with_one_token(mcp_url: str) -> None:
    async with client(mcp_url, ADMIN) as first, client(mcp_url, ADMIN) as second:
        found = await call(first, "search_evidence", {"query": "Orion Planner", "limit": 1})
        read = found["hits"][0]["id"]
        await call(first, "fetch_evidence", {"ids": [read]})
        answer = {"answer": f"The planner routes the fleet [{read}]."}
        assert (await call(first, "check_citations", answer))["grounded"] is True
        check = await call(second, "check_citations", answer)
        assert check["grounded"] is False and check["invalid"][0]["reason"] == "not_fetched"


async def test_a_connection_cannot_be_used_with_another_token(mcp_url: str) -> None:
    async with (
        httpx.AsyncClient(headers={"Authorization": f"Bearer {TEAM}"}, timeout=120) as http,
        streamable_http_client(mcp_url, http_client=http) as (read, write, session_id),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await call(session, "status")
        http.headers["Authorization"] = f"Bearer {PLANNER}"  # the same connection, another token
        error = await refused(session, "status")
        assert "opened with another token" in error
        assert PLANNER not in error and TEAM not in error
        assert session_id()


def test_no_token_or_a_wrong_token_gets_401(mcp_url: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789abcdef"}, {"Authorization": "Basic x"}):
        response = httpx.post(mcp_url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=60)
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"] == "Bearer"
        assert "wrong-token" not in response.text
    ok = httpx.post(mcp_url, json=INITIALIZE, headers={**ACCEPT, "Authorization": f"Bearer {ADMIN}"}, timeout=60)
    assert ok.status_code == 200 and "mcp-session-id" in ok.headers


def test_a_loopback_server_refuses_a_foreign_host_or_origin(mcp_url: str) -> None:
    headers = {**ACCEPT, "Authorization": f"Bearer {ADMIN}"}
    foreign_host = httpx.post(mcp_url, json=INITIALIZE, headers={**headers, "Host": "evil.example:80"}, timeout=60)
    assert foreign_host.status_code == 421
    foreign_origin = httpx.post(
        mcp_url, json=INITIALIZE, headers={**headers, "Origin": "http://evil.example"}, timeout=60
    )
    assert foreign_origin.status_code == 403


@pytest.mark.needs_prefect  # runs `agrag serve` in a subprocess
def test_serving_on_a_non_loopback_host_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [AGRAG, "serve", "--host", "0.0.0.0", "--port", "0"],
        check=False,
        cwd=tmp_path,
        env={"PATH": str(Path(AGRAG).parent), "HOME": str(tmp_path), "AGRAG_DATA_DIR": str(tmp_path / "data")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "needs tokens" in done.stderr and "AGRAG_API_TOKENS" in done.stderr
    assert not (tmp_path / "data").exists(), "nothing was opened"


async def test_agrag_mcp_beside_a_running_server_forwards_to_its_endpoint(mcp_url: str, mcp_data_dir: Path) -> None:
    async with (
        stdio_client(stdio_parameters(mcp_data_dir)) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert init.instructions is not None and "check_citations" in init.instructions
        assert "search_evidence" in {tool.name for tool in (await session.list_tools()).tools}
        found = await call(session, "search_evidence", {"query": QUESTION, "limit": 2})
        first = found["hits"][0]["id"]
        await call(session, "fetch_evidence", {"ids": [first]})
        check = await call(session, "check_citations", {"answer": f"The owners are on the team page [{first}]."})
        assert check["grounded"] is True
        error = await refused(session, "fetch_evidence", {"ids": ["nope"]})
        assert error.startswith("Evidence error:")


def test_agrag_mcp_says_so_when_the_server_holding_the_data_dir_does_not_answer(
    mcp_url: str, mcp_data_dir: Path
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    write_server_file(mcp_data_dir, dead, ADMIN)  # this process still holds the data dir's lock
    try:
        parameters = stdio_parameters(mcp_data_dir)
        done = subprocess.run(
            [parameters.command, *parameters.args],
            check=False,
            input="",
            env=parameters.env,
            cwd=parameters.cwd,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        write_server_file(mcp_data_dir, mcp_url.removesuffix("/mcp"), ADMIN)
    assert done.returncode == 1 and done.stdout == "", "nothing but the protocol reaches stdout"
    assert f"The agrag server at {dead}" in done.stderr and "did not answer" in done.stderr
    assert ADMIN not in done.stderr
