"""Filter translation as a property: both Qdrant backends return exactly the points a filter admits.

A fixed set of points with varied payloads (some fields missing, keyword and integer values, and a list of
documents as a fact's payload holds) is stored once per backend. Hypothesis writes payload filters (equals, any-of,
excludes, within, id lists) and ``SearchFilters`` turned into payload filters by ``payload_filter_for``; each backend
must return exactly the points the same filter admits when evaluated in Python, by both legs and by similarity
lookups.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.retrievers.filter_conditions import FILTERABLE, payload_filter_for
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
DOCUMENTS = ("da", "db", "dc", "dd")
KINDS = ("text", "table", "cell")
TITLES = ("Team", "Sites", "Ops")
ORDERS = (0, 1, 2, 3)
FIELDS: dict[str, tuple[Any, ...]] = {
    STATUS_FIELD: (CURRENT, SUPERSEDED),
    "document_id": DOCUMENTS,
    "kind": KINDS,
    "title": TITLES,
    "order": ORDERS,
}
KEYWORDS = (STATUS_FIELD, "document_id", "kind", "title", "document_ids")
LISTED = "document_ids"  # a list field: any of its values meets a condition; ``within`` needs every one allowed


def _points() -> list[VectorPoint]:
    rng = random.Random(15)
    points = []
    for number in range(60):
        payload: dict[str, Any] = {key: rng.choice(values) for key, values in FIELDS.items() if rng.random() > 0.15}
        if rng.random() > 0.15:
            payload[LISTED] = sorted(rng.sample(DOCUMENTS, rng.randint(0, 3)))
        dense = [rng.uniform(-1, 1) for _ in range(DIM)]
        points.append(VectorPoint(f"p{number:02d}", dense, f"robot number {number}", payload))
    return points


POINTS = _points()
IDS = tuple(p.id for p in POINTS)


@pytest.fixture(scope="module", params=["edge", "qdrant-client"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VectorStore]:
    path = tmp_path_factory.mktemp(request.param)
    opened: VectorStore
    if request.param == "edge":
        opened = QdrantEdgeVectorStore(path, VectorCollection.CHUNKS, DIM, keyword_fields=KEYWORDS)
    else:
        opened = QdrantServerVectorStore(VectorCollection.CHUNKS, DIM, path=path, keyword_fields=KEYWORDS)
    opened.upsert(POINTS)
    yield opened
    opened.close()


def _value(key: str) -> st.SearchStrategy[Any]:
    one = st.sampled_from(FIELDS[key])
    if key == "order":
        return one
    return st.one_of(one, st.lists(one, min_size=1, max_size=3, unique=True).map(tuple))


@st.composite
def payload_filters(draw: st.DrawFn) -> PayloadFilter:
    keys = st.sampled_from([*sorted(FIELDS), LISTED])
    equals = tuple((k, draw(_value_of(k))) for k in draw(st.lists(keys, max_size=3)))
    excludes = tuple((k, draw(_value_of(k))) for k in draw(st.lists(keys, max_size=2)))
    ids = draw(st.none() | st.frozensets(st.sampled_from(IDS), max_size=20))
    allowed = st.lists(st.sampled_from(DOCUMENTS), min_size=1, max_size=3, unique=True).map(tuple)
    within = tuple((LISTED, draw(allowed)) for _ in range(draw(st.integers(0, 1))))
    return PayloadFilter(equals, excludes, ids, within)


def _value_of(key: str) -> st.SearchStrategy[Any]:
    return _value("document_id") if key == LISTED else _value(key)


def _holds(payload: dict[str, Any], value: Any, key: str) -> bool:
    if key not in payload:
        return False
    stored = payload[key] if isinstance(payload[key], list) else [payload[key]]
    wanted = value if isinstance(value, tuple) else (value,)
    return any(v in wanted for v in stored)


def admits(condition: PayloadFilter, point: VectorPoint) -> bool:
    """The filter's meaning, as ``PayloadFilter`` documents it: a missing field fails equals and passes excludes.

    A list field meets a condition when any of its values does, and ``within`` when every one is allowed.
    """
    if condition.ids is not None and point.id not in condition.ids:
        return False
    if not all(_holds(point.payload, value, key) for key, value in condition.equals):
        return False
    if not all(set(point.payload.get(key, [])) <= set(values) for key, values in condition.within):
        return False
    return not any(_holds(point.payload, value, key) for key, value in condition.excludes)


PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, database=None)


@PROPERTY_SETTINGS
@given(condition=payload_filters(), probe=st.sampled_from(POINTS))
def test_each_backend_returns_exactly_the_points_a_filter_admits(
    store: VectorStore, condition: PayloadFilter, probe: VectorPoint
) -> None:
    expected = {p.id for p in POINTS if admits(condition, p)}
    fused = store.query(probe.dense, "robot", limit=len(POINTS), payload_filter=condition)
    assert {h.id for h in fused} == expected
    dense = store.query_leg(QueryLeg.DENSE, probe.dense, "", limit=len(POINTS), payload_filter=condition)
    assert {h.id for h in dense} == expected
    keyword = store.query_leg(QueryLeg.KEYWORD, [], "robot", limit=len(POINTS), payload_filter=condition)
    assert {h.id for h in keyword} == expected
    assert set(store.similarities(probe.dense, IDS, condition)) == expected


@st.composite
def search_filters(draw: st.DrawFn) -> SearchFilters:
    chunk_fields = [k for k in FILTERABLE[VectorCollection.CHUNKS] if k in FIELDS]
    properties = {k: draw(_value(k)) for k in draw(st.lists(st.sampled_from(chunk_fields), max_size=2, unique=True))}
    documents = draw(st.lists(st.sampled_from(DOCUMENTS), max_size=3, unique=True))
    return SearchFilters(document_ids=tuple(documents), properties=properties)


@PROPERTY_SETTINGS
@given(filters=search_filters(), probe=st.sampled_from(POINTS))
def test_search_filters_reach_the_store_query_with_their_meaning(
    store: VectorStore, filters: SearchFilters, probe: VectorPoint
) -> None:
    current = PayloadFilter(((STATUS_FIELD, CURRENT),))
    condition = payload_filter_for(VectorCollection.CHUNKS, current, filters)
    hits = store.query(probe.dense, "robot", limit=len(POINTS), payload_filter=condition)

    def meets(point: VectorPoint) -> bool:
        payload = point.payload
        if payload.get(STATUS_FIELD) != CURRENT:
            return False
        if filters.document_ids and payload.get("document_id") not in filters.document_ids:
            return False
        return all(_holds(payload, value, key) for key, value in filters.properties.items())

    assert {h.id for h in hits} == {p.id for p in POINTS if meets(p)}


@PROPERTY_SETTINGS
@given(documents=st.lists(st.sampled_from(DOCUMENTS), max_size=3, unique=True), probe=st.sampled_from(POINTS))
def test_a_fact_search_within_documents_keeps_facts_every_passage_of_which_is_there(
    store: VectorStore, documents: list[str], probe: VectorPoint
) -> None:
    current = PayloadFilter(((STATUS_FIELD, CURRENT),))
    condition = payload_filter_for(VectorCollection.FACTS, current, SearchFilters(document_ids=tuple(documents)))
    hits = store.query(probe.dense, "robot", limit=len(POINTS), payload_filter=condition)

    def meets(point: VectorPoint) -> bool:
        listed = set(point.payload.get(LISTED, []))
        inside = not documents or (bool(listed & set(documents)) and listed <= set(documents))
        return point.payload.get(STATUS_FIELD) == CURRENT and inside

    assert {h.id for h in hits} == {p.id for p in POINTS if meets(p)}


def test_the_points_cover_every_case_the_properties_need(tmp_path: Path) -> None:
    """The fixed points have missing fields and every value, so no filter case is vacuous."""
    for key, values in FIELDS.items():
        seen = {p.payload.get(key, None) for p in POINTS}
        assert None in seen, f"no point lacks {key}"
        assert set(values) <= seen, f"some value of {key} is on no point"
