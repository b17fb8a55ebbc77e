"""The write tools over MCP: refused on a read-only server; with writes allowed, an ingested text is found."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.loaders.files_root import TEXTS_FOLDER
from agrag.pipelines.runtime import Runtime, open_runtime, serving
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from agrag.service.mcp.server import AgragMcpServer, McpOptions
from agrag.service.mcp.stdio import local_caller
from agrag.service.server.ingestion_queue import IngestionQueue
from agrag.service.tools.tool import ToolHost
from agrag.service.tools.write_tools import WriteHost
from tests.service.conftest import settings_of
from tests.service.mcp.conftest import ADMIN, TEAM, call, client, refused
from tests.support.served_api import uvicorn_in_thread

FERRY = "# Ferry Line\n\nThe Osprey ferry line links the two harbours; Tomasz Wren runs its timetable.\n"
NOTE = "# Kestrel Pump\n\nThe Kestrel Pump Station was commissioned by Ilse Varga in 2021 beside the north harbour.\n"


@pytest.fixture(scope="module")
def writable(mcp_data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[WriteHost]:
    """The corpus copy open in this process with a running ingestion queue (flows under the Prefect harness)."""
    with open_runtime([], settings_of(mcp_data_dir), embedder=embedder) as runtime:
        queue = IngestionQueue(runtime, runtime.runs)
        queue.start()
        try:
            with serving(runtime):
                yield WriteHost(runtime, queue)
        finally:
            queue.shutdown(30)


@asynccontextmanager
async def connected(host: ToolHost, allow_write: bool) -> AsyncIterator[ClientSession]:
    server = AgragMcpServer(host, lambda _: local_caller(None), McpOptions(allow_write=allow_write))
    async with create_connected_server_and_client_session(server.server) as session:
        yield session


async def test_a_read_only_server_neither_lists_nor_runs_the_write_tools(writable: WriteHost) -> None:
    runtime: Runtime = writable.runtime
    async with connected(ToolHost(runtime), allow_write=False) as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert "ingest" not in names and "delete_document" not in names
        error = await refused(session, "ingest", {"text": NOTE, "document": "kestrel.md"})
        assert error.startswith("Read-only server:") and "read-only" in error and "--allow-write" in error
        assert not (runtime.data_dir / TEXTS_FOLDER / "kestrel.md").exists()


async def test_an_ingested_text_is_found_by_the_next_search_of_the_same_client(writable: WriteHost) -> None:
    async with connected(writable, allow_write=True) as session:
        init_tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        for name in ("ingest", "delete_document"):
            annotations = init_tools[name].annotations
            assert annotations is not None and annotations.destructiveHint is True
            assert annotations.readOnlyHint is False
        before = await call(session, "search_evidence", {"query": "Kestrel Pump Station Ilse Varga", "limit": 3})
        document = document_id_for("kestrel.md", TEXTS_FOLDER)
        assert all(not hit["id"].startswith(document) for hit in before["hits"])

        written = await call(session, "ingest", {"text": NOTE, "document": "kestrel.md"})
        assert written["state"] == "completed" and written["document_id"] == document

        after = await call(session, "search_evidence", {"query": "Kestrel Pump Station Ilse Varga", "limit": 3})
        assert after["hits"][0]["id"].startswith(document)
        status = await call(session, "status")
        assert status["documents"] == 10, "the example corpus is still there beside the text"

        bad = await refused(session, "ingest", {"text": NOTE, "document": "../escape.md"})
        assert bad.startswith("Invalid arguments: document")
        deleted = await call(session, "delete_document", {"document_id": document})
        assert deleted["state"] == "completed"
        gone = await call(session, "search_evidence", {"query": "Kestrel Pump Station Ilse Varga", "limit": 3})
        assert all(not hit["id"].startswith(document) for hit in gone["hits"])


async def test_agrag_serve_with_writes_lets_unscoped_tokens_ingest_over_http(writable: WriteHost) -> None:
    runtime = writable.runtime
    team = document_id_for("team.md", "acme_notes")
    access = AccessPolicy([ApiToken("admin", ADMIN), ApiToken("team", TEAM, (team,))])
    app = create_app(runtime, access, queue=writable.queue, warm_up=False, mcp_writes=True)
    with uvicorn_in_thread(app) as url:
        async with client(f"{url}/mcp", TEAM) as scoped:
            assert "ingest" not in {tool.name for tool in (await scoped.list_tools()).tools}
            error = await refused(scoped, "ingest", {"text": FERRY, "document": "ferry.md"})
            assert error.startswith("Not allowed:") and "limited to documents" in error
        async with client(f"{url}/mcp", ADMIN) as admin:
            written = await call(admin, "ingest", {"text": FERRY, "document": "ferry.md"})
            assert written["state"] == "completed"
            found = await call(admin, "search_evidence", {"query": "Osprey ferry timetable Tomasz Wren", "limit": 1})
            assert found["hits"][0]["id"].startswith(written["document_id"])
            await call(admin, "delete_document", {"document_id": written["document_id"]})


async def test_files_need_a_files_root(writable: WriteHost) -> None:
    assert writable.runtime.settings.agrag.files_root is None
    async with connected(writable, allow_write=True) as session:
        error = await refused(session, "ingest", {"files": ["notes/*.md"]})
    assert error.startswith("Ingestion error: Ingesting files needs a files root") and "--files-root" in error
