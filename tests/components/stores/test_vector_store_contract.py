"""One contract, two backends: Qdrant Edge (embedded) and qdrant-client (local mode, as for a server)."""

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agrag.components.errors import StoreError
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.qdrant_server_vector_store import QdrantServerVectorStore
from agrag.components.stores.vector_store import (
    CURRENT,
    STATUS_FIELD,
    SUPERSEDED,
    PayloadFilter,
    QueryLeg,
    VectorCollection,
    VectorPoint,
    VectorStore,
)

DIM = 4
Opener = Callable[[Path], VectorStore]

INDEXED = (STATUS_FIELD, "doc")
BACKENDS: dict[str, Opener] = {
    "edge": lambda path: QdrantEdgeVectorStore(path / "edge", VectorCollection.CHUNKS, DIM, keyword_fields=INDEXED),
    "qdrant-client": lambda path: QdrantServerVectorStore(
        VectorCollection.CHUNKS, DIM, path=path / "local", keyword_fields=INDEXED
    ),
}

POINTS = [
    VectorPoint(
        "orion", [1.0, 0.0, 0.0, 0.0], "Maria Chen wrote the Orion Planner", {STATUS_FIELD: CURRENT, "doc": "a"}
    ),
    VectorPoint(
        "vega", [0.0, 1.0, 0.0, 0.0], "Vega Perception fuses lidar and camera", {STATUS_FIELD: CURRENT, "doc": "b"}
    ),
    VectorPoint(
        "atlas", [0.0, 0.0, 1.0, 0.0], "Atlas Controller runs the PID loops", {STATUS_FIELD: CURRENT, "doc": "b"}
    ),
    VectorPoint("beacon", [0.7, 0.7, 0.0, 0.0], "Beacon Telemetry ships metrics", {STATUS_FIELD: CURRENT, "doc": "c"}),
]


@pytest.fixture(params=sorted(BACKENDS))
def opener(request: pytest.FixtureRequest) -> Opener:
    return BACKENDS[request.param]


@pytest.fixture
def store(opener: Opener, tmp_path: Path) -> Iterator[VectorStore]:
    opened = opener(tmp_path)
    opened.upsert(POINTS)
    yield opened
    opened.close()


def test_dense_leg_ranks_the_nearest_vector_first(store: VectorStore) -> None:
    hits = store.query([0.0, 0.0, 1.0, 0.0], "zzz", limit=2)
    assert hits[0].id == "atlas"
    assert hits[0].payload["doc"] == "b"


def test_keyword_leg_finds_a_word_the_dense_leg_misses(store: VectorStore) -> None:
    # The query vector points at "orion"; only the BM25 leg knows which point says "lidar".
    hits = store.query([1.0, 0.0, 0.0, 0.0], "lidar", limit=2)
    assert {h.id for h in hits} == {"orion", "vega"}


def test_filter_matches_exact_values_and_any_of(store: VectorStore) -> None:
    only_b = store.query([1.0, 0.0, 0.0, 0.0], "robot", limit=10, payload_filter=PayloadFilter((("doc", "b"),)))
    assert {h.id for h in only_b} == {"vega", "atlas"}
    any_of = store.query([1.0, 0.0, 0.0, 0.0], "robot", limit=10, payload_filter=PayloadFilter((("doc", ("a", "c")),)))
    assert {h.id for h in any_of} == {"orion", "beacon"}


def test_set_payload_marks_points_superseded(store: VectorStore) -> None:
    store.set_payload(["orion"], {STATUS_FIELD: SUPERSEDED})
    current = store.query(
        [1.0, 0.0, 0.0, 0.0], "Orion", limit=10, payload_filter=PayloadFilter(((STATUS_FIELD, CURRENT),))
    )
    assert "orion" not in {h.id for h in current}
    assert len(current) == 3


def test_upsert_is_idempotent_and_existing_ids_are_reported(store: VectorStore) -> None:
    store.upsert(POINTS)
    assert store.count() == len(POINTS)
    assert store.existing_ids(["orion", "missing"]) == {"orion"}
    assert store.existing_ids([]) == set()


def test_limit_is_respected(store: VectorStore) -> None:
    assert len(store.query([0.5, 0.5, 0.5, 0.5], "the", limit=3)) == 3


def test_data_survives_reopening(opener: Opener, tmp_path: Path) -> None:
    first = opener(tmp_path)
    first.upsert(POINTS)
    first.close()
    again = opener(tmp_path)  # the payload indexes exist already: opening again must not fail
    try:
        assert again.count() == len(POINTS)
        assert again.query([0.0, 1.0, 0.0, 0.0], "camera", limit=1)[0].id == "vega"
    finally:
        again.close()


def test_both_backends_rank_alike(tmp_path: Path) -> None:
    rankings = []
    for name, opener in sorted(BACKENDS.items()):
        store = opener(tmp_path / name)
        store.upsert(POINTS)
        rankings.append([h.id for h in store.query([0.6, 0.4, 0.1, 0.0], "lidar camera", limit=4)])
        store.close()
    # Dense ranks beacon, orion, vega, atlas; only vega has the words: fused scores differ, so the order is fixed.
    assert rankings[0] == rankings[1] == ["vega", "beacon", "orion", "atlas"]


def test_edge_shard_open_twice_is_a_clear_store_error(tmp_path: Path) -> None:
    from agrag.components.errors import StoreLockedError

    first = QdrantEdgeVectorStore(tmp_path / "shard", VectorCollection.CHUNKS, DIM)
    try:
        with pytest.raises(StoreLockedError, match="AGRAG_DATA_DIR"):
            QdrantEdgeVectorStore(tmp_path / "shard", VectorCollection.CHUNKS, DIM)
    finally:
        first.close()


def test_exact_ties_are_ordered_by_id_on_every_call(opener: Opener, tmp_path: Path) -> None:
    store = opener(tmp_path)
    try:
        # "zeta" is first by vector and second by words; "alpha" the other way round: equal RRF scores.
        store.upsert(
            [
                VectorPoint("zeta", [1.0, 0.0, 0.0, 0.0], "pump valve", {STATUS_FIELD: CURRENT}),
                VectorPoint("alpha", [0.8, 0.6, 0.0, 0.0], "pump valve valve valve", {STATUS_FIELD: CURRENT}),
            ]
        )
        runs = [[(h.id, h.score) for h in store.query([1.0, 0.0, 0.0, 0.0], "valve", limit=2)] for _ in range(5)]
        assert runs[0][0][1] == pytest.approx(runs[0][1][1]), "the scores tie"
        assert all([hit_id for hit_id, _ in run] == ["alpha", "zeta"] for run in runs)
    finally:
        store.close()


def test_fetch_returns_normalized_vectors_and_payloads_of_stored_ids(store: VectorStore) -> None:
    store.upsert([VectorPoint("long", [3.0, 0.0, 4.0, 0.0], "a longer vector", {STATUS_FIELD: CURRENT, "doc": "d"})])
    points = {p.id: p for p in store.fetch(["orion", "long", "missing"], with_vectors=True)}
    assert set(points) == {"orion", "long"}
    assert list(points["long"].dense) == pytest.approx([0.6, 0.0, 0.8, 0.0])
    assert points["orion"].payload["doc"] == "a"
    assert store.fetch([]) == []
    assert [tuple(p.dense) for p in store.fetch(["orion"])] == [()]


def test_similarities_score_only_the_given_ids_that_pass_the_filter(store: VectorStore) -> None:
    sims = store.similarities([1.0, 0.0, 0.0, 0.0], ["orion", "beacon", "atlas", "missing"])
    assert sims == pytest.approx({"orion": 1.0, "beacon": 0.7071068, "atlas": 0.0}, abs=1e-5)
    only_c = store.similarities([1.0, 0.0, 0.0, 0.0], ["orion", "beacon"], PayloadFilter((("doc", "c"),)))
    assert set(only_c) == {"beacon"}
    assert store.similarities([1.0, 0.0, 0.0, 0.0], []) == {}


def test_delete_removes_points_and_ignores_unknown_ids(store: VectorStore) -> None:
    store.delete(["vega", "never-stored"])
    assert store.existing_ids(["orion", "vega", "atlas"]) == {"orion", "atlas"}
    assert store.count() == len(POINTS) - 1
    assert "vega" not in {h.id for h in store.query([0.0, 1.0, 0.0, 0.0], "Vega Perception", 10)}


def test_excluded_values_and_points_without_the_field_pass(store: VectorStore) -> None:
    store.upsert([VectorPoint("legacy", [0.0, 0.0, 0.0, 1.0], "Legacy point without a status", {"doc": "d"})])
    store.set_payload(["vega"], {STATUS_FIELD: SUPERSEDED})
    not_superseded = PayloadFilter().and_not(STATUS_FIELD, SUPERSEDED)
    found = {h.id for h in store.query([0.0, 1.0, 0.0, 0.0], "Vega Perception legacy", 10, not_superseded)}
    assert "vega" not in found and {"legacy", "orion"} <= found
    scores = store.similarities([0.0, 1.0, 0.0, 0.0], ["vega", "legacy", "beacon"], not_superseded)
    assert set(scores) == {"legacy", "beacon"}


def test_dense_leg_alone_orders_by_cosine_like_similarities(store: VectorStore) -> None:
    query = [0.6, 0.4, 0.1, 0.0]
    hits = store.query_leg(QueryLeg.DENSE, query, "lidar camera", limit=10)
    sims = store.similarities(query, [p.id for p in POINTS])
    assert [h.id for h in hits] == sorted(sims, key=lambda i: -sims[i]) == ["beacon", "orion", "vega", "atlas"]
    assert [h.score for h in hits] == pytest.approx([sims[h.id] for h in hits], abs=1e-5)
    assert hits[0].payload["doc"] == "c"
    # vega and atlas are both at cosine 0: the tie at the cut is settled by id.
    cut = store.query_leg(QueryLeg.DENSE, [1.0, 0.0, 0.0, 0.0], "", limit=3)
    assert [h.id for h in cut] == ["orion", "beacon", "atlas"]


def test_keyword_leg_alone_finds_a_rare_word_the_dense_leg_ranks_last(store: VectorStore) -> None:
    store.upsert(
        [VectorPoint("gearbox", [-1.0, 0.0, 0.0, 0.0], "The gearbox has a harmonic drive", {STATUS_FIELD: CURRENT})]
    )
    query = [1.0, 0.0, 0.0, 0.0]
    assert store.query_leg(QueryLeg.DENSE, query, "harmonic", limit=10)[-1].id == "gearbox"
    found = store.query_leg(QueryLeg.KEYWORD, query, "harmonic", limit=10)
    assert [h.id for h in found] == ["gearbox"]
    assert found[0].score > 0


def test_keyword_leg_alone_ranks_by_bm25_and_ignores_the_vector(store: VectorStore) -> None:
    # The vector points at beacon; vega has two of the words, beacon one.
    hits = store.query_leg(QueryLeg.KEYWORD, [0.7, 0.7, 0.0, 0.0], "lidar camera telemetry", limit=10)
    assert [h.id for h in hits] == ["vega", "beacon"]
    assert hits[0].score > hits[1].score > 0
    best = store.query_leg(QueryLeg.KEYWORD, [0.7, 0.7, 0.0, 0.0], "lidar camera telemetry", limit=1)
    assert [h.id for h in best] == ["vega"]


@pytest.mark.parametrize("text", ["zzzq xyzzy", "the of and", ""])
def test_keyword_leg_alone_finds_nothing_for_words_never_indexed(store: VectorStore, text: str) -> None:
    assert store.query_leg(QueryLeg.KEYWORD, [1.0, 0.0, 0.0, 0.0], text, limit=5) == []


@pytest.mark.parametrize("leg", list(QueryLeg))
def test_each_leg_alone_respects_the_payload_filter(store: VectorStore, leg: QueryLeg) -> None:
    # The words are in orion (doc a), vega and atlas (doc b); beacon has none of them.
    def ids(payload_filter: PayloadFilter) -> set[str]:
        return {h.id for h in store.query_leg(leg, [1.0, 0.0, 0.0, 0.0], "Orion lidar PID", 10, payload_filter)}

    only_b = PayloadFilter().and_("doc", "b")
    assert ids(only_b) == {"vega", "atlas"}
    assert ids(PayloadFilter().only_ids(["atlas", "orion", "missing"])) == {"orion", "atlas"}
    assert ids(only_b.only_ids(["atlas", "orion"])) == {"atlas"}
    assert ids(PayloadFilter().and_not("doc", "b")) >= {"orion"}


def test_a_leg_on_a_closed_store_is_a_store_error(opener: Opener, tmp_path: Path) -> None:
    store = opener(tmp_path)
    store.upsert(POINTS)
    store.close()
    with pytest.raises(StoreError, match="Query on"):
        store.query_leg(QueryLeg.KEYWORD, [1.0, 0.0, 0.0, 0.0], "lidar", limit=5)


def test_a_large_upsert_stores_every_point_and_reopens_whole(opener: Opener, tmp_path: Path) -> None:
    many = [
        VectorPoint(
            f"p{i}", [1.0, float(i % 7), 0.0, float(i % 3)], f"note {i} on the planner", {STATUS_FIELD: CURRENT}
        )
        for i in range(1_203)  # more than one of the Edge shard's update slices (UPSERT_SLICE)
    ]
    opened = opener(tmp_path)
    opened.upsert(many)
    opened.close()
    reopened = opener(tmp_path)
    try:
        assert reopened.count() == len(many)
        stored = reopened.fetch([p.id for p in many], with_vectors=True)
        assert sorted(p.id for p in stored) == sorted(p.id for p in many)
        last = {p.id: list(p.dense) for p in stored}["p1202"]
        norm = sum(v * v for v in many[-1].dense) ** 0.5
        assert [v / sum(x * x for x in last) ** 0.5 for v in last] == pytest.approx(
            [v / norm for v in many[-1].dense], abs=1e-6
        ), "the last slice's vectors are stored (a backend may keep them normalized)"
    finally:
        reopened.close()


def test_a_small_collection_has_nothing_to_index_and_optimize_changes_nothing(store: VectorStore) -> None:
    # Qdrant Edge indexes past vector_store.indexing_threshold_kb (tests/components/stores/test_edge_indexing.py);
    # a server indexes in the background, so it never has anything pending.
    before = store.query([0.0, 0.0, 1.0, 0.0], "lidar", limit=4)
    assert not store.index_pending()
    assert store.optimize() is False
    assert store.query([0.0, 0.0, 1.0, 0.0], "lidar", limit=4) == before


# Points whose payload holds lists, as a fact's does (the documents and passages that state it).
LISTED = [
    VectorPoint("one-doc", [1.0, 0.0, 0.0, 0.0], "Victor Hale owns Osprey Ceramics", {"docs": ["a"]}),
    VectorPoint("two-docs", [0.9, 0.1, 0.0, 0.0], "Osprey Ceramics supplies glaze", {"docs": ["a", "b"]}),
    VectorPoint("other-doc", [0.8, 0.2, 0.0, 0.0], "Krill-9 feeds on plankton", {"docs": ["c"]}),
    VectorPoint("no-docs", [0.7, 0.3, 0.0, 0.0], "an unsupported fact", {"docs": []}),
]


def test_a_list_field_matches_when_any_of_its_values_does(opener: Opener, tmp_path: Path) -> None:
    store = opener(tmp_path)
    try:
        store.upsert(LISTED)
        hits = store.query([1.0, 0.0, 0.0, 0.0], "x", limit=10, payload_filter=PayloadFilter((("docs", ("b", "z")),)))
        assert {h.id for h in hits} == {"two-docs"}
        assert set(store.matching_ids(PayloadFilter((("docs", ("a",)),)))) == {"one-doc", "two-docs"}
    finally:
        store.close()


@pytest.mark.parametrize("leg", [None, *QueryLeg])
def test_within_keeps_only_points_whose_every_listed_value_is_allowed(
    opener: Opener, tmp_path: Path, leg: QueryLeg | None
) -> None:
    store = opener(tmp_path)
    try:
        store.upsert(LISTED)
        # what a search limited to document a asks of facts: some passage in a, none outside it
        scoped = PayloadFilter((("docs", ("a",)),)).and_within("docs", ("a",))
        text = "Osprey Ceramics Victor Hale glaze Krill-9 fact"
        if leg is None:
            hits = store.query([1.0, 0.0, 0.0, 0.0], text, limit=10, payload_filter=scoped)
        else:
            hits = store.query_leg(leg, [1.0, 0.0, 0.0, 0.0], text, limit=10, payload_filter=scoped)
        assert {h.id for h in hits} == {"one-doc"}
        wider = PayloadFilter((("docs", ("a", "b")),)).and_within("docs", ("a", "b"))
        assert set(store.matching_ids(wider)) == {"one-doc", "two-docs"}
        # alone, within lets through a point with no value at all: nothing lies outside the allowed ones
        assert set(store.matching_ids(PayloadFilter().and_within("docs", ("c",)))) == {"other-doc", "no-docs"}
        similar = store.similarities([1.0, 0.0, 0.0, 0.0], [p.id for p in LISTED], scoped)
        assert set(similar) == {"one-doc"}
    finally:
        store.close()
