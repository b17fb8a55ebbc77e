"""Qdrant Edge indexing: a collection indexed for search (int8 copies, rescored) answers exactly as before.

``QdrantEdgeVectorStore.optimize`` turns a growing segment past ``indexing_threshold_kb`` into a search segment.
Every read the adapter offers must give the same ids and the same scores afterwards, reopened, and after later
writes, as a twin store that was never indexed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.edge_shard_settings import EdgeShardSettings
from agrag.components.data_models.qdrant_collection_settings import VectorQuantization
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.vector_store import (
    STATUS_FIELD,
    SUPERSEDED,
    PayloadFilter,
    QueryLeg,
    VectorCollection,
    VectorHit,
    VectorPoint,
)

DIM = 24
POINTS = 1500  # 1500 * 24 floats = 141 KB: past a 100 KB threshold, far below the default one
WORDS = tuple(f"w{n}" for n in range(400))  # many words, texts of different lengths: BM25 seldom ties exactly
INDEXED_FIELDS = ("doc", STATUS_FIELD)


def _unit(rng: random.Random, centre: list[float]) -> list[float]:
    vector = [c + rng.gauss(0.0, 0.6) for c in centre]
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]


def _points(seed: int, count: int, start: int = 0) -> list[VectorPoint]:
    """Points in clusters (as embeddings are), with short texts and two payload fields."""
    rng = random.Random(seed)
    centres = [[rng.gauss(0.0, 1.0) for _ in range(DIM)] for _ in range(12)]
    return [
        VectorPoint(
            f"p{start + i:05d}",
            _unit(rng, centres[rng.randrange(len(centres))]),
            " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 14))),
            {"doc": f"d{(start + i) % 7}", STATUS_FIELD: "current"},
        )
        for i in range(count)
    ]


def _open(path: Path, threshold_kb: int, quantization: VectorQuantization) -> QdrantEdgeVectorStore:
    settings = EdgeShardSettings(quantization=quantization, indexing_threshold_kb=threshold_kb)
    return QdrantEdgeVectorStore(path, VectorCollection.CHUNKS, DIM, keyword_fields=INDEXED_FIELDS, settings=settings)


def _key(hits: list[VectorHit]) -> tuple[tuple[float, ...], tuple[str, ...]]:
    """The scores, and the ids in order down to the last score (ties at the cut may keep either point)."""
    last = min((h.score for h in hits), default=0.0)
    return tuple(round(h.score, 5) for h in hits), tuple(h.id for h in hits if h.score > last + 1e-6)


def _reads(store: QdrantEdgeVectorStore, legs: tuple[QueryLeg, ...] = tuple(QueryLeg)) -> dict[str, object]:
    """Every kind of read, for a handful of queries: each leg alone, filtered, by ids, and similarities.

    Fused queries are left out: RRF of integer ranks ties, and Qdrant orders the ties of a leg's candidates
    arbitrarily, so one store answers a fused query with slightly different scores from call to call.
    """
    rng = random.Random(7)
    answers: dict[str, object] = {}
    queries = _points(99, 6, start=90_000)
    only_d3 = PayloadFilter((("doc", "d3"),))
    not_superseded = PayloadFilter().and_not(STATUS_FIELD, SUPERSEDED)
    some_ids = [f"p{rng.randrange(POINTS):05d}" for _ in range(40)]
    for n, q in enumerate(queries):
        for leg in legs:
            answers[f"{leg}{n}"] = _key(store.query_leg(leg, q.dense, q.text, 25))
            answers[f"{leg}-filtered{n}"] = _key(store.query_leg(leg, q.dense, q.text, 10, only_d3))
            answers[f"{leg}-current{n}"] = _key(store.query_leg(leg, q.dense, q.text, 10, not_superseded))
            answers[f"{leg}-ids{n}"] = _key(
                store.query_leg(leg, q.dense, q.text, 5, PayloadFilter().only_ids(some_ids))
            )
        answers[f"similar{n}"] = {k: round(v, 5) for k, v in store.similarities(q.dense, some_ids).items()}
    answers["count"] = store.count()
    return answers


@pytest.fixture(params=list(VectorQuantization))
def quantization(request: pytest.FixtureRequest) -> VectorQuantization:
    return VectorQuantization(request.param)


@pytest.fixture
def twins(
    tmp_path: Path, quantization: VectorQuantization
) -> Iterator[tuple[QdrantEdgeVectorStore, QdrantEdgeVectorStore]]:
    """Two stores holding the same points: the first indexes at 100 KB, the second never (the default threshold)."""
    indexed = _open(tmp_path / "indexed", 100, quantization)
    plain = _open(tmp_path / "plain", EdgeShardSettings().indexing_threshold_kb, quantization)
    for store in (indexed, plain):
        store.upsert(_points(1, POINTS))
    yield indexed, plain
    indexed.close()
    plain.close()


def test_indexing_changes_no_answer(twins: tuple[QdrantEdgeVectorStore, QdrantEdgeVectorStore]) -> None:
    indexed, plain = twins
    assert indexed.index_pending() and not plain.index_pending()
    before = _reads(indexed)
    assert before == _reads(plain)
    assert indexed.optimize() is True
    assert not indexed.index_pending()
    assert indexed.optimize() is False, "nothing is left to index"
    assert _reads(indexed) == before


def test_writes_after_indexing_read_as_on_a_store_never_indexed(
    twins: tuple[QdrantEdgeVectorStore, QdrantEdgeVectorStore],
) -> None:
    indexed, plain = twins
    indexed.optimize()
    superseded = [f"p{i:05d}" for i in range(0, POINTS, 3)]
    deleted = [f"p{i:05d}" for i in range(1, POINTS, 11)]
    for store in (indexed, plain):
        store.upsert(_points(2, 200, start=POINTS))  # new points in a growing segment beside the indexed one
        store.upsert(_points(3, 50, start=100))  # points of the indexed segment replaced
        store.set_payload(superseded, {STATUS_FIELD: SUPERSEDED})
        store.delete(deleted)
    # The keyword leg's IDF counts points deleted from a search segment until Qdrant vacuums it (at 20% deleted),
    # so its BM25 scores drift slightly from a store that never indexed; the dense leg must not move at all.
    assert _reads(indexed, (QueryLeg.DENSE,)) == _reads(plain, (QueryLeg.DENSE,))
    gone = set(deleted)
    for q in _points(99, 6, start=90_000):
        hits = indexed.query_leg(
            QueryLeg.KEYWORD, q.dense, q.text, 50, PayloadFilter().and_not(STATUS_FIELD, SUPERSEDED)
        )
        assert hits and not gone & {h.id for h in hits}
        assert not set(superseded) & {h.id for h in hits}
        fused = indexed.query(q.dense, q.text, 10, PayloadFilter().and_not(STATUS_FIELD, SUPERSEDED))
        assert len(fused) == 10 and not (gone | set(superseded)) & {h.id for h in fused}
    assert indexed.existing_ids(deleted) == set()
    kept = [i for i in superseded if i not in gone][:5]
    assert {p.id for p in indexed.fetch(kept)} == set(kept)


def test_an_indexed_shard_reopens_indexed(tmp_path: Path, quantization: VectorQuantization) -> None:
    store = _open(tmp_path / "shard", 100, quantization)
    store.upsert(_points(1, POINTS))
    store.optimize()
    before = _reads(store)
    store.close()
    # reopened with the defaults: the search segment keeps how it was indexed
    again = _open(tmp_path / "shard", EdgeShardSettings().indexing_threshold_kb, VectorQuantization.INT8)
    try:
        assert not again.index_pending()
        assert _reads(again) == before
    finally:
        again.close()


def test_a_store_below_its_threshold_has_nothing_to_index(tmp_path: Path) -> None:
    store = _open(tmp_path / "small", 1000, VectorQuantization.INT8)  # 1000 KB: more than the 141 KB of points
    try:
        store.upsert(_points(1, POINTS))
        assert not store.index_pending()
        assert store.optimize() is False
    finally:
        store.close()
