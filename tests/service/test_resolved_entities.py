"""Entities that resolution formed from several come back as ``ResolvedEntity``, naming what they absorbed.

The example notes say "CAN" in six files and spell out "Controller Area Network" in the glossary; offline resolution
merges the two by the acronym rule. A search shows one item that names both, ranked exactly as before.
"""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.common.data_models.entity import Entity, ResolvedEntity
from agrag.components.data_models.resolution import ResolutionRule
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.graph.passage_graph_cache import PassageGraphCache
from agrag.components.joiners.rrf_joiner import reciprocal_rank_fusion
from agrag.components.retrievers.qdrant_entity_retriever import QdrantEntityRetriever
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.service.console import results_json, results_table
from agrag.service.tools.search_tool import SearchOutput
from tests.service.conftest import copy_corpus, settings_of

QUERIES = ("Controller Area Network", "CAN bus timeouts", "Who wrote the Orion Planner?", "Robot Operating System")


@pytest.fixture
def runtime(ingested_corpus: Path, tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[Runtime]:
    with open_runtime([], settings_of(copy_corpus(ingested_corpus, tmp_path)), embedder=embedder) as opened:
        yield opened


def resolved_can(results: list[SearchResult]) -> ResolvedEntity:
    (found,) = [r.item for r in results if isinstance(r.item, ResolvedEntity) and r.item.name == "CAN"]
    return found


async def test_a_search_returns_one_resolved_entity_naming_both_forms(runtime: Runtime) -> None:
    for recipe in ("entity", "hybrid"):
        results = await runtime.engine.search("Controller Area Network", load_recipe(recipe))
        can = resolved_can(results)
        assert can.aliases == ("Controller Area Network",)
        (member,) = can.merged_from
        assert member.rule is ResolutionRule.ACRONYM and "Controller Area Network" in member.reason
        assert runtime.store.graph.resolved_ids([member.id]) == {member.id: can.id}  # a stored record, merged
        # one item for the one entity, and other entities stay plain
        assert [r.item.id for r in results].count(can.id) == 1
        assert any(type(r.item) is Entity for r in results)


def _ids_and_scores(results: list[SearchResult]) -> list[tuple[tuple[str, str], float, str, tuple[str, ...]]]:
    return [(r.key, r.score, r.method, r.methods) for r in results]


async def test_rankings_are_the_same_as_without_the_merge_information(
    runtime: Runtime, embedder: SentenceTransformersTextEmbedder
) -> None:
    store = runtime.store
    hybrid, chunk = load_recipe("hybrid"), load_recipe("chunk")
    names = PassageGraphCache(store.graph)
    knowing = QdrantEntityRetriever(store.entities, top_k=hybrid.limit, names=names, graph=store.graph)
    plain = QdrantEntityRetriever(store.entities, top_k=hybrid.limit, names=names)  # no graph: entities as stored
    resolved_seen = 0
    for query in QUERIES:
        embedding = embedder.run(text=query)["embedding"]
        after = knowing.run(query=query, query_embedding=embedding)["results"]
        before = plain.run(query=query, query_embedding=embedding)["results"]
        assert [(r.item.id, r.score) for r in after] == [(r.item.id, r.score) for r in before], query
        assert all(type(r.item) is Entity for r in before)
        resolved_seen += sum(isinstance(r.item, ResolvedEntity) for r in after)
        # The engine's hybrid list is the fusion of the entity and chunk lists, as it was with plain entities.
        passages = await runtime.engine.search(query, chunk)
        expected = reciprocal_rank_fusion([before, passages], k=runtime.settings.retrieval.rrf_k)[: hybrid.limit]
        found = await runtime.engine.search(query, hybrid)
        assert _ids_and_scores(found) == _ids_and_scores(expected), query
    assert resolved_seen >= 2  # CAN and ROS, each absorbed its spelled-out name


async def test_a_document_filter_shows_only_the_merged_names_those_documents_use(runtime: Runtime) -> None:
    by_path = {d.source_path: d.id for d in runtime.store.graph.documents()}
    entity = load_recipe("entity")
    glossary = SearchFilters(document_ids=(by_path["glossary.txt"],))
    results = await runtime.engine.search("Controller Area Network", entity, glossary)
    assert resolved_can(results).aliases == ("Controller Area Network",)
    # The incident notes say "CAN" only: there the entity absorbed nothing they name.
    incidents = SearchFilters(document_ids=(by_path["incidents.md"],))
    results = await runtime.engine.search("CAN bus", entity, incidents)
    (can,) = [r.item for r in results if r.item.name == "CAN"]
    assert type(can) is Entity


async def test_the_cli_http_and_mcp_outputs_show_what_was_merged(runtime: Runtime) -> None:
    results = await runtime.engine.search("Controller Area Network", load_recipe("hybrid"))
    rows = json.loads(results_json(results, None))["results"]
    # typed entities make more merges in the example corpus (short forms of people, too): the CAN row is the one here
    (row,) = [r for r in rows if r["type"] == "ResolvedEntity" and r["item"]["name"] == "CAN"]
    assert row["method"] and row["score"] > 0
    assert [(m["name"], m["rule"]) for m in row["item"]["merged_from"]] == [("Controller Area Network", "acronym")]
    assert {r["type"] for r in rows} >= {"Entity", "Chunk"}
    table = results_table(results, "results")
    labels = list(table.columns[4].cells)
    assert "CAN (also Controller Area Network)" in labels
    # The search tool's output (HTTP and MCP): kind "entity", merged_from in the item, read back unchanged.
    output = SearchOutput.of("Controller Area Network", "hybrid", results, None)
    hits = output.model_dump(mode="json")["hits"]
    (hit,) = [h for h in hits if "merged_from" in h["item"] and h["item"]["name"] == "CAN"]
    assert hit["kind"] == "entity" and hit["item"]["merged_from"][0]["name"] == "Controller Area Network"
    assert SearchOutput.model_validate_json(output.model_dump_json()).results() == results
