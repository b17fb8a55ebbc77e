"""Latency of the evidence function ``EvidenceSession.discover`` for ``bench_ingest_search.py``, next to its floor.

``discover(query, "hybrid", limit=10)`` embeds the query once, sends two single-leg queries to the chunk shard (dense,
then BM25) for ``min(limit * 4, 200)`` candidates each (plus the store's tie margin) among the current chunks, and
fuses them by RRF (k = 60) in Python before it builds the hits and their snippets. It runs twice per query: over
every document, and within a scope of ``SCOPE_DOCUMENTS`` documents (picked with a fixed seed), which adds a
``document_id`` condition to both requests: the second row shows what the scope filter costs.

The floor of a row is the work ``discover`` cannot avoid, done with the bare libraries: one query embedding (bare
MiniLM ``embed_batch``) plus the two Edge requests our store sends, straight to the shard, with the same filter and
limit and the BM25 query vector precomputed (as for the recipe floors; a query with no indexed word sends no keyword
request, as in the store). The fusion, the evidence ids and the snippets are agrag's work, left out. Both rows share
one floor embedding per query. Rows and floor run interleaved, query by query in a rotating order, as the recipes do.

Each row also counts the hits that are not among its floor's candidates (``hits_outside_floor``, 0 when the floor
sends the requests ``discover`` sends).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import qdrant_edge as qe

# bench/recipe_latency.py, next to this module (the bench script puts bench/ on sys.path)
from recipe_latency import CURRENT_CHUNKS, _settled, _timed, pct  # type: ignore[import-not-found]

from agrag.components.data_models.evidence import DiscoverMode, DiscoverResult, EvidenceScope
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.evidence.qdrant_chunk_discoverer import CANDIDATES_PER_RESULT, MAX_CANDIDATES
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.qdrant_common import DENSE_VECTOR, KEYWORD_VECTOR, TIE_MARGIN, bm25_encoder
from agrag.components.stores.vector_store import QueryLeg
from agrag.pipelines.evidence_session import EvidenceSession

MODE = DiscoverMode.HYBRID
LIMIT = 10
CANDIDATES = min(LIMIT * CANDIDATES_PER_RESULT, MAX_CANDIDATES)  # what each leg of discover asks for
SCOPE_DOCUMENTS = 50
SCOPE_SEED = 13
ALL_DOCUMENTS = "MATCH (d:Document) WHERE d.version <> '' RETURN d.id ORDER BY d.id"  # not the deleted ones
ROWS = ("discover", f"discover_scoped_{SCOPE_DOCUMENTS}")
LEG_VECTORS = {QueryLeg.DENSE: DENSE_VECTOR, QueryLeg.KEYWORD: KEYWORD_VECTOR}


def scoped_filter(document_ids: Sequence[str]) -> qe.Filter:
    """The filter of a scoped ``discover``: current chunks of the given documents, conditions in the store's order."""
    in_scope = qe.FieldCondition(key="document_id", match=qe.MatchAny(any=list(document_ids)))
    return qe.Filter(must=[*(CURRENT_CHUNKS.must or []), in_scope], must_not=[])


@dataclass
class EvidenceFloor:
    """The bare calls of ``discover``'s floor, on the chunk shard of an open knowledge store."""

    store: KnowledgeStore
    embedder: Any
    bm25: Any = field(default_factory=bm25_encoder)

    def __post_init__(self) -> None:
        self.shard = self.store.chunks._shard  # type: ignore[attr-defined]  # the engine, not our store class

    def leg(self, leg: QueryLeg, vector: Any, where: qe.Filter) -> list[Any]:
        """The request ``QdrantEdgeVectorStore.query_leg`` sends: one nearest-neighbour query, no prefetch."""
        request = qe.QueryRequest(
            limit=CANDIDATES + TIE_MARGIN,
            query=qe.Query.Nearest(vector, using=LEG_VECTORS[leg]),
            filter=where,
            with_payload=True,
        )
        return list(self.shard.query(request))

    def measure(self, query: str, filters: dict[str, qe.Filter]) -> tuple[dict[str, float], dict[str, set[str]]]:
        """Time one embedding and each row's two leg requests; seconds by part, and each row's candidate ids."""
        parts: dict[str, float] = {}
        parts["embed"], vectors = _timed(lambda: self.embedder.embed_batch([query]))
        query_vectors = {QueryLeg.DENSE: list(vectors[0]), QueryLeg.KEYWORD: self.bm25.embed_query(query)}
        candidates: dict[str, set[str]] = {}
        for row, where in filters.items():
            candidates[row] = set()
            for leg, vector in query_vectors.items():
                parts[f"{leg.value}_leg_{row}"] = 0.0  # a query with no indexed word sends no keyword request
                if leg is QueryLeg.KEYWORD and not vector.indices:
                    continue
                parts[f"{leg.value}_leg_{row}"], points = _timed(partial(self.leg, leg, vector, where))
                candidates[row].update(str(EvidenceId.of_chunk_id(h.id)) for h in _settled(points, CANDIDATES))
        return parts, candidates


@dataclass
class DiscoverRun:
    """Timings of one ``discover`` row over the timed queries."""

    row: str
    session: EvidenceSession
    seconds: list[float] = field(default_factory=list)
    floor_seconds: list[float] = field(default_factory=list)
    first_query_ms: float = 0.0
    hits: int = 0
    truncated: int = 0
    failed_legs: int = 0
    hits_outside_floor: int = 0

    @property
    def floor(self) -> list[str]:
        """The floor parts (see ``EvidenceFloor.measure``) of this row."""
        return ["embed", *(f"{leg.value}_leg_{self.row}" for leg in LEG_VECTORS)]

    def search(self, query: str) -> tuple[DiscoverResult, float]:
        """One timed ``discover`` call."""
        started = time.perf_counter()
        found = self.session.discover(query, MODE, LIMIT)
        return found, time.perf_counter() - started

    def record(self, found: DiscoverResult, seconds: float, parts: dict[str, float], candidates: set[str]) -> None:
        self.seconds.append(seconds)
        self.floor_seconds.append(sum(parts[p] for p in self.floor))
        self.hits += len(found.hits)
        self.truncated += found.truncated
        self.failed_legs += len(found.failed_legs)
        self.hits_outside_floor += sum(hit.id not in candidates for hit in found.hits)

    def summary(self, parts: dict[str, list[float]]) -> dict[str, Any]:
        timed, floor = pct(self.seconds), pct(self.floor_seconds)
        scope = self.session.scope.document_ids
        return {
            "mode": MODE.value,
            "limit": LIMIT,
            "candidates_per_leg": CANDIDATES,
            "scope_documents": None if scope is None else len(scope),
            "p50_ms": timed["p50_ms"],
            "p95_ms": timed["p95_ms"],
            "floor_p50_ms": floor["p50_ms"],
            "floor_p95_ms": floor["p95_ms"],
            "ratio_p50": timed["p50_ms"] / floor["p50_ms"],
            "floor_parts_p50_ms": {p: pct(parts[p])["p50_ms"] for p in self.floor},
            "first_query_ms": self.first_query_ms,
            "mean_hits": self.hits / len(self.seconds),
            "truncated": self.truncated,
            "failed_legs": self.failed_legs,
            "hits_outside_floor": self.hits_outside_floor,
        }


def pick_scope(documents: list[str]) -> tuple[str, ...]:
    """``SCOPE_DOCUMENTS`` of the documents (all of them if there are fewer), picked with a fixed seed."""
    return tuple(sorted(random.Random(SCOPE_SEED).sample(documents, min(SCOPE_DOCUMENTS, len(documents)))))


def bench_evidence(store: KnowledgeStore, embedder: Any, *, warm_up: list[str], queries: list[str]) -> dict[str, Any]:
    """Run ``discover`` unscoped and scoped, and their floor, on ``queries``, interleaved; return the summary rows."""
    started = time.perf_counter()
    floor = EvidenceFloor(store, embedder)
    documents = [row[0] for row in store.graph._conn.execute(ALL_DOCUMENTS).get_all()]  # type: ignore[attr-defined]
    scope = pick_scope(documents)
    filters = {ROWS[0]: CURRENT_CHUNKS, ROWS[1]: scoped_filter(scope)}
    runs = {
        ROWS[0]: DiscoverRun(ROWS[0], EvidenceSession(store, embedder)),
        ROWS[1]: DiscoverRun(ROWS[1], EvidenceSession(store, embedder, EvidenceScope(scope))),
    }
    for run in runs.values():
        run.first_query_ms = run.search(warm_up[0])[1] * 1000
    for query in warm_up:
        floor.measure(query, filters)
        for run in runs.values():
            run.search(query)
    parts: dict[str, list[float]] = {}
    order: list[str | None] = [None, *ROWS]  # None: the floor parts
    for i, query in enumerate(queries):
        shift = i % len(order)
        measured: dict[str, float] = {}
        candidates: dict[str, set[str]] = {}
        timed: dict[str, tuple[DiscoverResult, float]] = {}
        for row in order[shift:] + order[:shift]:
            if row is None:
                measured, candidates = floor.measure(query, filters)
            else:
                timed[row] = runs[row].search(query)
        for part, seconds in measured.items():
            parts.setdefault(part, []).append(seconds)
        for row, (found, seconds) in timed.items():
            runs[row].record(found, seconds, measured, candidates[row])
    return {
        "rows": {row: run.summary(parts) for row, run in runs.items()},
        "floor_parts": {p: pct(s) for p, s in parts.items()},
        "documents": len(documents),
        "wall_seconds": time.perf_counter() - started,
    }
