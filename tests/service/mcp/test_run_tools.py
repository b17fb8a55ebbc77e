"""The reextract and finalize write tools through the MCP SDK client, on a real queue (lexical extractor, no LLM)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.ingestion_run import RunKind
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.pipelines.runtime import open_runtime, serving
from agrag.service.mcp.server import AgragMcpServer, McpOptions
from agrag.service.mcp.stdio import local_caller
from agrag.service.server.ingestion_queue import IngestionQueue
from agrag.service.tools.tool import ToolHost
from agrag.service.tools.write_tools import WriteHost
from tests.service.conftest import settings_of
from tests.service.mcp.conftest import call, refused

TEAM = document_id_for("team.md", "acme_notes")
NOTE = "# Kestrel Pump\n\nThe Kestrel Pump Station was commissioned by Ilse Varga in 2021 for Harbour Works.\n"


@pytest.fixture(scope="module")
def writable(mcp_data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[WriteHost]:
    """The corpus copy served with ``ingest.finalize=manual`` and a running queue (flows under the harness)."""
    with open_runtime(["ingest.finalize=manual"], settings_of(mcp_data_dir), embedder=embedder) as runtime:
        queue = IngestionQueue(runtime, runtime.runs)
        queue.start()
        try:
            with serving(runtime):
                yield WriteHost(runtime, queue)
        finally:
            queue.shutdown(30)


@asynccontextmanager
async def connected(host: ToolHost, allow_write: bool = True) -> AsyncIterator[ClientSession]:
    server = AgragMcpServer(host, lambda _: local_caller(None), McpOptions(allow_write=allow_write))
    async with create_connected_server_and_client_session(server.server) as session:
        yield session


async def test_the_tools_are_listed_as_writes_only_when_writes_are_allowed(writable: WriteHost) -> None:
    async with connected(writable) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    for name in ("reextract", "finalize"):
        annotations = tools[name].annotations
        assert annotations is not None and annotations.destructiveHint is True and annotations.readOnlyHint is False
        assert "Ask the user" in (tools[name].description or "")
    assert "set_ontology" in (tools["reextract"].description or "")
    assert set(tools["reextract"].inputSchema["properties"]) == {"document_ids", "other_settings", "force"}
    async with connected(ToolHost(writable.runtime), allow_write=False) as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        error = await refused(session, "finalize")
    assert "reextract" not in names and "finalize" not in names
    assert error.startswith("Read-only server:") and "--allow-write" in error


async def test_a_forced_reextraction_redoes_one_document_and_reports_it(writable: WriteHost) -> None:
    async with connected(writable) as session:
        before = await call(session, "status")
        done = await call(session, "reextract", {"document_ids": [TEAM], "force": True})
        again = await call(session, "reextract", {"document_ids": [TEAM]})
        after = await call(session, "status")
    assert done["state"] == "completed" and done["message"] == "Re-extraction: 1 reextracted, 0 unchanged, 0 failed."
    assert done["documents"] == [{"document_id": TEAM, "status": "reextracted", "reason": ""}]
    assert writable.queue.get(done["run_id"]).kind == RunKind.REEXTRACT
    assert [d["status"] for d in again["documents"]] == ["unchanged"]
    assert after["chunks"] == before["chunks"] and after["documents"] == before["documents"]


async def test_a_bad_reextraction_is_refused_before_any_run(writable: WriteHost) -> None:
    runs_before = len(writable.queue.runs(500))
    async with connected(writable) as session:
        unknown = await refused(session, "reextract", {"document_ids": [TEAM, "dnothing"]})
        nothing = await refused(session, "reextract", {})
        both = await refused(session, "reextract", {"document_ids": [TEAM], "other_settings": True})
        too_many = await refused(session, "reextract", {"document_ids": [f"d{i}" for i in range(1001)]})
    assert "No stored document has the id 'dnothing'" in unknown, unknown  # only the unknown one is named
    assert nothing.startswith("Invalid arguments:") and "other_settings" in nothing
    assert both.startswith("Invalid arguments:") and "not both" in both
    assert too_many.startswith("Invalid arguments: document_ids")
    assert len(writable.queue.runs(500)) == runs_before


async def test_finalize_builds_the_communities_a_manual_ingestion_deferred(writable: WriteHost) -> None:
    async with connected(writable) as session:
        written = await call(session, "ingest", {"text": NOTE, "document": "kestrel.md"})
        ingestion = writable.queue.get(written["run_id"])
        finalized = await call(session, "finalize")
        again = await call(session, "finalize")
    assert written["state"] == "completed" and ingestion.report is not None
    assert ingestion.report["communities_deferred"] is True
    assert finalized["state"] == "completed" and finalized["error"] == ""
    assert finalized["message"].startswith("finalized: communities rebuilt around ")
    run = writable.queue.get(finalized["run_id"])
    assert run.kind == RunKind.FINALIZE and [s.name for s in run.stages] == ["communities", "reports"]
    assert run.report is not None and run.report["finalized"] is True
    assert again["message"] == "nothing to finalize: the communities and reports are up to date"
