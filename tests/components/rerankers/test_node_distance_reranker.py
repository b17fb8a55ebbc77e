from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.community import Community, community_id_for
from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.data_models.search_result import SearchItem, SearchResult
from agrag.components.errors import ConfigError
from agrag.components.rerankers.node_distance_reranker import NodeDistanceReranker
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

DOC = Document(id="d1", version="v1", title="Notes", source_path="notes.md")
NAMES = ["Maria Chen", "Orion Planner", "Atlas Controller", "Kalman Filter", "Acme Labs", "Vega Robot", "Lidar"]
A, B, C, D, E, F, G = (Entity(entity_id_for(n), n, "Name") for n in NAMES)
TEXTS = [
    "Maria Chen wrote the Orion Planner.",
    "The Orion Planner drives the Atlas Controller.",
    "The Atlas Controller runs a Kalman Filter.",
    "Acme Labs is in Berlin.",
    "On filtering noise.",
    "The Vega Robot carries a Lidar.",
]
CH = [
    Chunk(chunk_id_for(DOC.id, DOC.version, i), DOC.id, DOC.version, text, ("Notes",), i, 0, len(text))
    for i, text in enumerate(TEXTS)
]
# A - B - C - D is a chain of relations, F - G a separate pair, E has no relation. Chunk 4 is about D only.
MENTIONS = [(0, A), (0, B), (1, B), (1, C), (2, C), (2, D), (3, E), (5, F), (5, G)]


def relation(a: Entity, b: Entity, chunk: Chunk) -> Relation:
    return Relation(relation_id_for(a.id, b.id, "RELATED_TO"), a.id, b.id, "RELATED_TO", (chunk.id,))


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    store.write_chunks([DOC], CH)
    store.upsert_entities([A, B, C, D, E, F, G])
    store.upsert_mentions([Mention(CH[i].id, e.id, 1) for i, e in MENTIONS])
    store.upsert_about([Mention(CH[4].id, D.id, 1)])
    store.upsert_relations([relation(A, B, CH[0]), relation(B, C, CH[1]), relation(C, D, CH[2]), relation(F, G, CH[5])])
    store.commit_documents([(DOC, len(CH))])
    yield store
    store.close()


ROW = CypherRow.of("MATCH (e:Entity) RETURN count(e) AS n", ("n",), (7,))
CD = relation(C, D, CH[2])
CG = Community(community_id_for(1, (C.id, G.id)), 1, (C.id, G.id))
# The incoming (fused) order; Maria Chen (A) is the first entity, so the seed when top_entities=1.
INCOMING: list[SearchItem] = [CH[5], CH[2], A, CH[4], CD, CG, D, ROW, B, CH[1], E, CH[0], C]


def fused(items: list[SearchItem]) -> list[SearchResult]:
    return [SearchResult(item, 1.0 / (61 + rank), "entity", ("entity",)) for rank, item in enumerate(items)]


def test_results_are_ordered_by_hops_from_the_top_entity_then_incoming_rank(graph: KuzuGraphStore) -> None:
    out = NodeDistanceReranker(graph, top_entities=1, max_depth=3).run(results=fused(INCOMING))["results"]
    assert [r.item for r in out] == [
        A, CH[0],  # the seed, and the chunk that mentions it
        B, CH[1],  # one hop
        CH[2], CD, CG, C,  # two hops: a chunk naming C, the relation C-D, the community of C and G, C itself
        CH[4], D,  # three hops: D, and the chunk about D
        CH[5], ROW, E,  # unreachable, unknown, unconnected: max_depth + 1, in incoming order
    ]  # fmt: skip
    assert [r.score for r in out] == pytest.approx([1.0] * 2 + [1 / 2] * 2 + [1 / 3] * 4 + [1 / 4] * 2 + [1 / 5] * 3)
    assert all(r.method == "entity" for r in out)


def test_entities_beyond_max_depth_count_as_unreachable(graph: KuzuGraphStore) -> None:
    out = NodeDistanceReranker(graph, top_entities=1, max_depth=2).run(results=fused(INCOMING))["results"]
    assert [r.item for r in out][-5:] == [CH[5], CH[4], D, ROW, E]
    assert [r.score for r in out[-5:]] == pytest.approx([1 / 4] * 5)


def test_every_seed_counts_from_zero(graph: KuzuGraphStore) -> None:
    items: list[SearchItem] = [CH[5], D, CH[3], F, A, G]
    out = NodeDistanceReranker(graph, top_entities=2, max_depth=3).run(results=fused(items))["results"]
    # Seeds D and F (the first two entities); A is three hops from D, G one from F, E (chunk 3) is unconnected.
    assert [r.item for r in out] == [CH[5], D, F, G, A, CH[3]]


def test_without_an_entity_the_results_pass_unchanged(graph: KuzuGraphStore) -> None:
    results = fused([CH[3], CD, CH[0], ROW])
    assert NodeDistanceReranker(graph).run(results=results)["results"] == results
    assert NodeDistanceReranker(graph).run(results=[])["results"] == []


def test_the_graph_is_read_again_only_after_a_write(graph: KuzuGraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = 0
    entity_graph = graph.entity_graph

    def counting() -> tuple[list[str], list[tuple[str, str, float]]]:
        nonlocal reads
        reads += 1
        return entity_graph()

    monkeypatch.setattr(graph, "entity_graph", counting)
    reranker = NodeDistanceReranker(graph, top_entities=1)
    results = fused([CH[3], E, A])
    assert [r.item for r in reranker.run(results=fused([A, E, CH[3]]))["results"]] == [A, E, CH[3]]
    reranker.run(results=results)
    assert reads == 1

    graph.upsert_relations([relation(A, E, CH[3])])
    graph.commit_documents([(DOC, len(CH))])  # a committed write: a new generation
    assert [r.item for r in reranker.run(results=fused([A, CH[3], E]))["results"]] == [A, CH[3], E]
    assert reads == 2
    assert reranker.run(results=fused([A, E]))["results"][1].score == pytest.approx(1 / 2)


def test_bad_settings_are_config_errors(graph: KuzuGraphStore) -> None:
    with pytest.raises(ConfigError, match="top_entities"):
        NodeDistanceReranker(graph, top_entities=0)
    with pytest.raises(ConfigError, match="max_depth"):
        NodeDistanceReranker(graph, max_depth=-1)
