"""``set_ontology`` over MCP through the SDK client: listed only with writes allowed, refused to scoped callers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.service.mcp.server import AgragMcpServer, McpOptions
from agrag.service.mcp.stdio import local_caller
from agrag.service.tools.tool import ToolHost
from tests.service.conftest import settings_of
from tests.service.mcp.conftest import call, refused


@pytest.fixture
def runtime(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[Runtime]:
    settings = settings_of(tmp_path / "data")
    with open_runtime(["ingest/ontology=engineering"], settings, require_data=False, embedder=embedder) as opened:
        yield opened


async def test_set_ontology_over_mcp(runtime: Runtime) -> None:
    host = ToolHost(runtime)
    read_only = AgragMcpServer(host, lambda _: local_caller(None), McpOptions())
    assert "set_ontology" not in read_only.tool_names
    async with create_connected_server_and_client_session(read_only.server) as session:
        assert "--allow-write" in await refused(session, "set_ontology", {"labels": [{"label": "Vendor"}]})

    writable = AgragMcpServer(host, lambda _: local_caller(None), McpOptions(allow_write=True))
    async with create_connected_server_and_client_session(writable.server) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert listed["set_ontology"].annotations is not None and not listed["set_ontology"].annotations.readOnlyHint
        change = await call(
            session,
            "set_ontology",
            {
                "labels": [{"label": "Vendor", "description": "A company that sells us parts"}],
                "relations": [{"type": "SUPPLIES", "source": "Vendor", "target": "Component"}],
            },
        )
        assert [r["status"] for r in change["results"]] == ["added", "added"]
        ontology = await call(session, "get_ontology")
        assert {"label": "Vendor", "description": "A company that sells us parts", "origin": "added"} in (
            ontology["labels"]
        )
        error = await refused(session, "set_ontology", {"labels": [{"label": "Entity"}]})
        assert "agrag's own graph tables" in error and "Traceback" not in error

    scoped = AgragMcpServer(host, lambda _: local_caller(["a.md"]), McpOptions(allow_write=True))
    async with create_connected_server_and_client_session(scoped.server) as session:
        assert "limited to documents" in await refused(session, "set_ontology", {"labels": [{"label": "Buyer"}]})
