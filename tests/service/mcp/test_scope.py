"""Scope through MCP: two HTTP clients with tokens of other documents call every read tool, and no reply ever names
a document, passage, entity, relation or community that only documents outside the caller's scope hold.

The oracle reads the graph without any scope (the code under test applies the scope), as
``tests/adversarial/test_scope_properties.py`` does for the evidence functions in-process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.pipelines.settings import Settings
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from tests.service.conftest import settings_of
from tests.service.mcp.conftest import client, text_of
from tests.support.served_api import uvicorn_in_thread

TEAM = "team-token-0123456789abcdef0"
PLANNER = "planner-token-0123456789abcd"
SCOPES = {
    TEAM: tuple(sorted(document_id_for(name, "acme_notes") for name in ("team.md", "sites.csv"))),
    PLANNER: tuple(sorted(document_id_for(name, "acme_notes") for name in ("orion_planner.md", "incidents.md"))),
}
QUERIES = ("Who owns the Orion Planner?", "Which incidents hit the Lyon site?", "Maria Chen")
RECIPES = ("chunk", "hybrid", "entity", "graph_expand", "multi_hop", "bridge", "thematic")
LEDGER_CAPACITY = 5
FAKE_DOCUMENT = "d0123456789abcde"


@dataclass(frozen=True)
class Oracle:
    """What one scope may be told of, and every id of the corpus, read from the graph without a scope."""

    scope: frozenset[str]
    forbidden: frozenset[str]  # ids held only outside the scope: documents, entities, relations, communities
    in_scope_chunks: tuple[str, ...]
    out_of_scope_chunks: tuple[str, ...]

    @classmethod
    def of(cls, runtime: Runtime, scope: tuple[str, ...]) -> Oracle:
        graph = runtime.store.graph
        documents = [d.id for d in graph.documents(limit=1000)]
        entities = graph.entity_ids_of_documents(documents)
        relations = {r.id: r for e in entities for r in graph.relations_of(e)}
        others = [d for d in documents if d not in scope]
        forbidden = {
            *others,
            *(entities - graph.entity_ids_of_documents(scope)),
            *(graph.community_ids_of_documents(documents) - graph.community_ids_of_documents(scope)),
            *(i for i, r in relations.items() if not any(c.split(".")[0] in scope for c in r.chunk_ids)),
        }

        def chunks(ids: list[str]) -> tuple[str, ...]:
            found = graph.get_chunks([c for d in ids for c in graph.document_chunk_ids(d)])
            return tuple(str(EvidenceId.of_chunk(c)) for c in found)

        return cls(frozenset(scope), frozenset(forbidden), chunks(list(scope)), chunks(others))

    def check(self, reply: str, sent: dict[str, Any], what: str) -> None:
        """No forbidden id in ``reply``, once what the caller sent is taken out (an error may quote it back)."""
        for value in _strings(sent):
            reply = reply.replace(value, "")
        leaked = sorted(i for i in self.forbidden if i in reply)
        assert not leaked, f"{what} returned ids outside the scope: {leaked[:5]}"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class Probe:
    """One client's calls, each reply checked against its scope's oracle; counts what it checked."""

    def __init__(self, session: ClientSession, oracle: Oracle) -> None:
        self.session, self.oracle, self.calls = session, oracle, 0

    async def __call__(self, name: str, arguments: dict[str, Any] | None = None) -> tuple[bool, Any]:
        """(ok, structured reply or error text), once the reply is checked."""
        result = await self.session.call_tool(name, arguments or {})
        self.oracle.check(text_of(result), arguments or {}, f"{name}({arguments})")
        self.calls += 1
        return (not result.isError, result.structuredContent if not result.isError else text_of(result))


@pytest.fixture(scope="module")
def scoped_mcp(mcp_data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[tuple[str, Runtime]]:
    """`agrag serve`'s app over the corpus copy, its /mcp limited by settings as AGRAG_MCP_* would set them."""
    base = settings_of(mcp_data_dir)
    agrag = base.agrag.model_copy(update={"mcp_ledger_capacity": LEDGER_CAPACITY, "mcp_max_result_chars": 10**6})
    access = AccessPolicy([ApiToken("team", TEAM, SCOPES[TEAM]), ApiToken("planner", PLANNER, SCOPES[PLANNER])])
    with (
        open_runtime([], Settings(agrag, base.retrieval), embedder=embedder) as runtime,
        uvicorn_in_thread(create_app(runtime, access, warm_up=False)) as url,
    ):
        yield f"{url}/mcp", runtime


async def _search(probe: Probe) -> int:
    """search_evidence in every mode, find_entities, explore of what it found, search with every recipe."""
    explored = 0
    for query in QUERIES:
        for mode in ("hybrid", "keyword", "vector", "graph"):
            ok, found = await probe("search_evidence", {"query": query, "mode": mode, "limit": 20})
            assert ok and all(hit["id"].split(".")[0] in probe.oracle.scope for hit in found["hits"])
        ok, entities = await probe("find_entities", {"query": query, "limit": 10})
        assert ok
        for entity in entities["result"][:3]:
            ok, _ = await probe("explore", {"entity": entity["id"], "depth": 2})
            explored += ok
        for recipe in RECIPES:
            ok, reply = await probe("search", {"query": query, "recipe": recipe, "trace": True})
            assert ok or reply.startswith("Retrieval error:"), reply  # a recipe that cannot keep to the scope
    return explored


async def _read(probe: Probe) -> None:
    """fetch_evidence of every evidence id of the corpus, navigate from each in every direction."""
    oracle = probe.oracle
    every = [*oracle.in_scope_chunks, *oracle.out_of_scope_chunks]
    for start in range(0, len(every), 20):
        ids = every[start : start + 20]
        ok, fetched = await probe("fetch_evidence", {"ids": ids})
        assert ok and {item["id"] for item in fetched["items"]} == set(ids) & set(oracle.in_scope_chunks)
        assert set(fetched["not_found"]) == set(ids) - set(oracle.in_scope_chunks)
    for evidence_id in every:
        for direction in ("parent", "children", "siblings", "previous", "next", "cells"):
            ok, near = await probe("navigate", {"id": evidence_id, "direction": direction})
            if evidence_id in oracle.in_scope_chunks:
                assert ok or (direction == "cells" and "is not in a table" in near), near
                continue
            # an id of another scope is answered exactly as the same id of a document that exists nowhere
            fake = FAKE_DOCUMENT + evidence_id[len(FAKE_DOCUMENT) :]
            unknown = await probe("navigate", {"id": fake, "direction": direction})
            assert (ok, json.dumps(near).replace(evidence_id, fake)) == (unknown[0], json.dumps(unknown[1]))
            break


async def _describe(probe: Probe, runtime: Runtime) -> None:
    """status, get_ontology and list_documents, against the graph."""
    scope = sorted(probe.oracle.scope)
    ok, status = await probe("status")
    assert ok and status["documents"] == len(scope) and status["scope"] == scope
    ok, ontology = await probe("get_ontology")
    assert ok and sum(ontology["stored_entity_labels"].values()) <= len(
        runtime.store.graph.entity_ids_of_documents(scope)
    )
    ok, documents = await probe("list_documents")
    assert ok and sorted(d["id"] for d in documents["result"]) == scope


async def test_no_read_tool_returns_anything_outside_the_tokens_scope(scoped_mcp: tuple[str, Runtime]) -> None:
    url, runtime = scoped_mcp
    probes: dict[str, Probe] = {}
    explored: dict[str, int] = {}

    async def use(token: str) -> None:
        async with client(url, token) as session:
            probe = probes[token] = Probe(session, Oracle.of(runtime, SCOPES[token]))
            explored[token] = await _search(probe)
            await _read(probe)
            await _describe(probe, runtime)

    async with anyio.create_task_group() as group:  # both clients at once, each on its own connection
        for token in SCOPES:
            group.start_soon(use, token)
    for token, probe in probes.items():
        assert probe.oracle.forbidden and probe.oracle.in_scope_chunks and probe.calls > 100
        assert explored[token] > 0, "explore reached some entity of the scope"


async def test_the_ledger_capacity_of_the_settings_bounds_each_connection(scoped_mcp: tuple[str, Runtime]) -> None:
    url, runtime = scoped_mcp
    ids = Oracle.of(runtime, SCOPES[PLANNER]).in_scope_chunks
    assert len(ids) > LEDGER_CAPACITY
    async with client(url, PLANNER) as session:
        result = await session.call_tool("fetch_evidence", {"ids": list(ids)})
    reply = json.loads(text_of(result))
    assert reply["ledger"]["capacity"] == LEDGER_CAPACITY
    assert reply["ledger"]["dropped_oldest"] == len(ids) - LEDGER_CAPACITY
