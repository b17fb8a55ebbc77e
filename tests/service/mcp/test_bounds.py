"""Bounded replies and bounded ledgers, through the SDK's client connected in memory to the MCP server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.service.mcp.bounded_result import bound, size
from agrag.service.mcp.server import AgragMcpServer, McpOptions
from agrag.service.mcp.stdio import local_caller
from agrag.service.tools.tool import ToolHost
from tests.service.conftest import settings_of
from tests.service.mcp.conftest import call, refused, text_of

SECRET_KEY = "sk-live-0123456789abcdefghij"


@pytest.fixture(scope="module")
def runtime(mcp_data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[Runtime]:
    """The corpus copy open in this process."""
    with open_runtime([], settings_of(mcp_data_dir), embedder=embedder) as opened:
        yield opened


@asynccontextmanager
async def connected(runtime: Runtime, **options: Any) -> AsyncIterator[ClientSession]:
    """A client connected in memory to a server with ``options``."""
    server = AgragMcpServer(ToolHost(runtime), lambda _: local_caller(None), McpOptions(**options), [SECRET_KEY])
    async with create_connected_server_and_client_session(server.server) as session:
        yield session


def passages(runtime: Runtime, count: int) -> list[str]:
    """The ids of ``count`` passages (found outside the client, whose replies may be cut)."""
    found = runtime.evidence_session().discover("robot fleet planner incidents owner", "vector", count)
    ids = [hit.id for hit in found.hits]
    assert len(ids) == count
    return ids


async def test_an_oversized_reply_is_cut_to_valid_json_and_its_dropped_evidence_cannot_be_cited(
    runtime: Runtime,
) -> None:
    async with connected(runtime, max_result_chars=2500) as session:
        ids = passages(runtime, 10)
        result = await session.call_tool("fetch_evidence", {"ids": ids})
        assert not result.isError
        text = text_of(result)
        assert len(text) <= 2500 and json.loads(text) == result.structuredContent
        reply = result.structuredContent
        assert reply is not None
        kept = [item["id"] for item in reply["items"]]
        cut = reply["truncation"]["evidence_not_citable"]
        assert kept and cut and set(kept) | set(cut) == set(ids) and not set(kept) & set(cut)
        assert reply["truncation"]["cut"] == [f"items: {len(kept)} of {len(ids)} items kept"]
        check = await call(session, "check_citations", {"answer": f"Kept [{kept[0]}]. Cut [{cut[0]}]."})
        assert check["cited"] == [kept[0]]
        assert [(i["id"], i["reason"]) for i in check["invalid"]] == [(cut[0], "not_fetched")]


async def test_the_ledger_keeps_the_newest_evidence_and_says_what_it_dropped(runtime: Runtime) -> None:
    async with connected(runtime, ledger_capacity=3) as session:
        ids = passages(runtime, 5)
        first = await call(session, "fetch_evidence", {"ids": ids[:3]})
        assert "ledger" not in first
        second = await call(session, "fetch_evidence", {"ids": ids[3:]})
        assert second["ledger"]["capacity"] == 3 and second["ledger"]["dropped_oldest"] == 2
        answer = " ".join(f"Claim [{i}]." for i in ids)
        check = await call(session, "check_citations", {"answer": answer})
        assert sorted(i["id"] for i in check["invalid"]) == sorted(ids[:2])
        assert check["cited"] == ids[2:]


async def test_errors_are_short_name_their_kind_and_mask_secrets(runtime: Runtime) -> None:
    async with connected(runtime) as session:
        error = await refused(session, "search", {"query": "x", "recipe": "no_such_recipe"})
        assert error.startswith("Configuration error:") and "Traceback" not in error and len(error) < 1200
        error = await refused(session, "search", {"query": "x", "overrides": [f"llm.api_key={SECRET_KEY}"]})
        assert SECRET_KEY not in error and "***" in error
        error = await refused(session, "explore", {"entity": "Orion Planner", "depth": 9})
        assert error.startswith("Invalid arguments: depth") and "Fix them" in error


def test_bound_keeps_valid_json_within_the_limit_and_names_what_it_cut() -> None:
    items = [{"id": f"d0123456789abcdef.0123456789ab.c{i}", "text": "word " * 60} for i in range(100)]
    data = {"items": items, "not_found": ["dx.y.c1"] * 3, "nested": {"lists": [["a" * 50] * 40]}}
    result = bound(data, 3000)
    assert size(result.data) <= 3000 and json.loads(json.dumps(result.data)) == result.data
    kept = [item["id"] for item in result.data["items"]]
    assert kept == [item["id"] for item in items[: len(kept)]], "the first items are kept, in order"
    assert set(result.dropped_evidence) == {item["id"] for item in items} - set(kept)
    assert f"items: {len(kept)} of 100 items kept" in result.cuts
    one_long = bound({"items": [{"id": "d1.v.c0", "text": "x" * 10_000}], "note": "y" * 3000}, 4000)
    assert size(one_long.data) <= 4000 and one_long.truncated
    assert bound(data, 10**7).cuts == () and bound(data, 10**7).data is data
