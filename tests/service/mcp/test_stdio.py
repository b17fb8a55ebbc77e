"""`agrag mcp` over stdio, driven by the MCP SDK's own client in a subprocess."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from agrag.components.data_models.document import document_id_for
from tests.service.mcp.conftest import QUESTION, call, refused, stdio_parameters

READ_TOOLS = {
    "search_evidence",
    "fetch_evidence",
    "navigate",
    "find_entities",
    "explore",
    "check_citations",
    "render_citations",
    "search",
    "status",
    "get_ontology",
    "list_documents",
}


async def test_the_evidence_loop_over_stdio(mcp_data_dir: Path) -> None:
    async with stdio_client(stdio_parameters(mcp_data_dir)) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.instructions is not None and "check_citations" in init.instructions
        assert "search_evidence" in init.instructions and "fetch" in init.instructions

        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(listed) == READ_TOOLS, "a read-only server lists no write tool"
        for tool in listed.values():
            assert tool.annotations is not None and tool.annotations.readOnlyHint is True
            assert tool.annotations.destructiveHint is False
            assert tool.description and "ost" in tool.description  # when to use it and what it costs
            assert tool.inputSchema["type"] == "object" and tool.inputSchema.get("additionalProperties") is False
        assert listed["search_evidence"].inputSchema["properties"]["query"]["maxLength"] == 4000
        assert "graph" in str(listed["search_evidence"].inputSchema)

        found = await call(session, "search_evidence", {"query": QUESTION, "limit": 5})
        assert found["hits"] and found["mode"] == "graph"  # the default: the bridge recipe's walk
        first = found["hits"][0]["id"]
        fetched = await call(session, "fetch_evidence", {"ids": [first]})
        assert [item["id"] for item in fetched["items"]] == [first] and fetched["items"][0]["text"]
        near = await call(session, "navigate", {"id": first, "direction": "next"})
        assert near["items"] or near["not_found"] == []
        seen = {first, *(item["id"] for item in near["items"])}
        unfetched = next(hit["id"] for hit in found["hits"] if hit["id"] not in seen)

        check = await call(session, "check_citations", {"answer": f"The owners are listed in the team page [{first}]."})
        assert check["grounded"] is True and check["cited"] == [first] and check["invalid"] == []
        check = await call(session, "check_citations", {"answer": f"Maria Chen owns the Orion Planner [{unfetched}]."})
        assert check["grounded"] is False
        assert [(i["id"], i["reason"]) for i in check["invalid"]] == [(unfetched, "not_fetched")]

        graph = await call(session, "search_evidence", {"query": QUESTION, "mode": "graph", "limit": 3})
        assert graph["mode"] == "graph" and graph["hits"] and len(graph["hits"]) <= 3
        assert all(hit["id"].startswith("d") for hit in graph["hits"])
        ontology = await call(session, "get_ontology")
        assert ontology["stored_entity_labels"]
        status = await call(session, "status")
        assert status["documents"] == 9

        error = await refused(session, "search_evidence", {"query": QUESTION, "lmit": 3})
        assert error.startswith("Invalid arguments: lmit") and "Traceback" not in error
        error = await refused(session, "fetch_evidence", {"ids": ["not an id"]})
        assert error.startswith("Evidence error:") and len(error) < 600
        error = await refused(session, "no_such_tool")
        assert "There is no tool 'no_such_tool'" in error


async def test_a_stdio_server_limited_to_documents_sees_only_them(mcp_data_dir: Path) -> None:
    team = document_id_for("team.md", "acme_notes")
    # the flag wins over the setting (AGRAG_MCP_LEDGER_CAPACITY), which is the flag's default
    parameters = stdio_parameters(
        mcp_data_dir, "--document", team, "--ledger-capacity", "2", AGRAG_MCP_LEDGER_CAPACITY="7"
    )
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        found = await call(session, "search_evidence", {"query": "Vega Perception lidar incidents", "limit": 10})
        assert found["hits"] and all(hit["id"].startswith(team) for hit in found["hits"])
        documents = await call(session, "list_documents")
        assert [d["id"] for d in documents["result"]] == [team]

        ids = [hit["id"] for hit in found["hits"][:3]]
        assert len(ids) == 3
        fetched = await call(session, "fetch_evidence", {"ids": ids})
        assert fetched["ledger"]["capacity"] == 2 and fetched["ledger"]["dropped_oldest"] == 1
        check = await call(session, "check_citations", {"answer": f"One [{ids[0]}]. Two [{ids[1]}]. Three [{ids[2]}]."})
        assert [i["id"] for i in check["invalid"]] == [ids[0]], "the oldest was dropped from the ledger"


@pytest.mark.parametrize(
    ("args", "env", "error"),
    [
        (
            (),
            {"AGRAG_MCP_MAX_RESULT_CHARS": "100"},
            "AGRAG_MCP_MAX_RESULT_CHARS: Input should be greater than or equal",
        ),
        (("--files-root", "."), {}, "--files-root is for the ingest tool, which only --allow-write offers"),
        (("--allow-write", "--files-root", "no/such/folder"), {}, "--files-root no/such/folder is not a folder"),
    ],
)
def test_bad_mcp_settings_stop_agrag_mcp_with_a_clear_error(
    mcp_data_dir: Path, args: tuple[str, ...], env: dict[str, str], error: str
) -> None:
    parameters = stdio_parameters(mcp_data_dir, *args, **env)
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
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert error in " ".join(done.stderr.split())
