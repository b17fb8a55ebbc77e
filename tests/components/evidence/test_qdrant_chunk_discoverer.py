"""``QdrantChunkDiscoverer`` on a real Qdrant Edge chunk collection: legs, fusion, filters, a failed leg, truncation."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from haystack import Pipeline

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.evidence import DiscoverMode
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.errors import RetrievalError
from agrag.components.evidence.qdrant_chunk_discoverer import DiscoverOutput, QdrantChunkDiscoverer
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.vector_payloads import chunk_payload
from agrag.components.stores.vector_store import STATUS_FIELD, SUPERSEDED, VectorCollection, VectorPoint

DIM = 4
TEXTS = {
    ("a", 1): "Maria Chen wrote the Orion Planner.",
    ("a", 2): "The Orion Planner uses SLAM maps.",
    ("b", 1): "Acme Robotics employs Maria Chen.",
    ("b", 2): "Acme Robotics builds Vega Perception.",
}
A1, A2, B1 = chunk_id_for("a", "v1", 1), chunk_id_for("a", "v1", 2), chunk_id_for("b", "v1", 1)
NEAR_A1 = Embedding((1.0, 0.5, 0.0, 0.0))  # closest to the first chunk's vector, then the second's


def axis(position: int) -> list[float]:
    return [1.0 if i == position else 0.0 for i in range(DIM)]


@pytest.fixture
def chunks(tmp_path: Path) -> Iterator[QdrantEdgeVectorStore]:
    """Four current chunks of documents a and b, each on its own axis."""
    store = QdrantEdgeVectorStore(tmp_path / "chunks", VectorCollection.CHUNKS, DIM)
    points = []
    for position, ((doc, order), text) in enumerate(TEXTS.items()):
        chunk = Chunk(chunk_id_for(doc, "v1", order), doc, "v1", text, (doc,), order, 0, len(text), None, doc)
        points.append(VectorPoint(chunk.id, axis(position), text, chunk_payload(chunk)))
    store.upsert(points)
    yield store
    store.close()


def ids(out: DiscoverOutput) -> list[str]:
    return [r.item.id for r in out["results"]]


def test_hybrid_fuses_the_legs_by_rank_and_names_the_legs_of_each_hit(chunks: QdrantEdgeVectorStore) -> None:
    out = QdrantChunkDiscoverer(chunks).run(query="Maria Chen wrote", query_embedding=NEAR_A1, limit=3)
    top = out["results"][0]
    assert top.item.id == A1
    assert top.methods == ("dense", "keyword") and top.score == pytest.approx(2 / 61), "first in both legs, k = 60"
    assert [r.score for r in out["results"]] == sorted((r.score for r in out["results"]), reverse=True)
    assert out["failed_legs"] == {} and out["truncated"], "four passages matched, three were returned"


def test_each_mode_runs_only_its_legs(chunks: QdrantEdgeVectorStore) -> None:
    discoverer = QdrantChunkDiscoverer(chunks)
    keyword = discoverer.run(query="Maria Chen wrote", mode=DiscoverMode.KEYWORD, limit=5)
    assert ids(keyword) == [A1, B1], "no embedding is needed for keywords alone"
    assert [r.methods for r in keyword["results"]] == [("keyword",), ("keyword",)]
    assert [r.score for r in keyword["results"]] == [pytest.approx(1 / 61), pytest.approx(1 / 62)]
    assert not keyword["truncated"]
    vector = discoverer.run(query="anything", mode=DiscoverMode.VECTOR, limit=2, query_embedding=NEAR_A1)
    assert ids(vector) == [A1, A2] and all(r.methods == ("dense",) for r in vector["results"])


def test_filters_and_superseded_chunks_are_applied_in_the_store_query(chunks: QdrantEdgeVectorStore) -> None:
    discoverer = QdrantChunkDiscoverer(chunks)
    only_b = SearchFilters(document_ids=("b",))
    assert ids(discoverer.run(query="Maria Chen", mode=DiscoverMode.KEYWORD, filters=only_b)) == [B1]
    chunks.set_payload([A1], {STATUS_FIELD: SUPERSEDED})
    assert ids(discoverer.run(query="Maria Chen wrote", mode=DiscoverMode.KEYWORD)) == [B1]
    assert A1 not in ids(discoverer.run(query="x", mode=DiscoverMode.VECTOR, query_embedding=NEAR_A1))


def test_a_failed_leg_is_named_and_the_other_leg_still_returns(chunks: QdrantEdgeVectorStore) -> None:
    wrong_size = Embedding((1.0, 0.0))  # the store refuses a vector of another dimension: the dense leg fails
    out = QdrantChunkDiscoverer(chunks).run(query="Maria Chen wrote", query_embedding=wrong_size)
    assert list(out["failed_legs"]) == ["dense"]
    assert out["failed_legs"]["dense"].startswith("StoreError: ") and "dimension" in out["failed_legs"]["dense"]
    assert ids(out) == [A1, B1] and all(r.methods == ("keyword",) for r in out["results"])


def test_truncated_says_whether_more_matched_than_were_returned(chunks: QdrantEdgeVectorStore) -> None:
    discoverer = QdrantChunkDiscoverer(chunks)
    one = discoverer.run(query="Maria Chen", mode=DiscoverMode.KEYWORD, limit=1)
    assert len(ids(one)) == 1 and one["truncated"]
    assert not discoverer.run(query="Maria Chen", mode=DiscoverMode.KEYWORD, limit=2)["truncated"]


def test_bad_arguments_are_refused(chunks: QdrantEdgeVectorStore) -> None:
    discoverer = QdrantChunkDiscoverer(chunks)
    with pytest.raises(RetrievalError, match="limit of at least 1, got 0"):
        discoverer.run(query="x", mode=DiscoverMode.KEYWORD, limit=0)
    with pytest.raises(RetrievalError, match="'hybrid' needs the query's embedding"):
        discoverer.run(query="x")
    assert QdrantChunkDiscoverer.needs_embedding(DiscoverMode.VECTOR)
    assert not QdrantChunkDiscoverer.needs_embedding(DiscoverMode.KEYWORD)


def test_it_runs_as_a_haystack_component(chunks: QdrantEdgeVectorStore) -> None:
    pipeline = Pipeline()
    pipeline.add_component("discover", QdrantChunkDiscoverer(chunks))
    out = pipeline.run({"discover": {"query": "Maria Chen wrote", "mode": DiscoverMode.KEYWORD, "limit": 1}})
    assert [r.item.id for r in out["discover"]["results"]] == [A1]
    assert out["discover"]["truncated"] and out["discover"]["failed_legs"] == {}
