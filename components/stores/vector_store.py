"""The vector store interface both Qdrant backends implement.

A vector store holds one collection (chunks, entities, community reports or facts). Every point has a dense vector
and a keyword (BM25) sparse vector computed from its text, and a JSON payload. A query runs both legs and fuses them
by rank inside the store, so each search method gets one ranked list; ``query_leg`` runs one leg alone, for a caller
that fuses the legs itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

# re-exported: the stores, the benchmarks and the tests have always imported the legs from here
from agrag.components.data_models.query_leg import QueryLeg as QueryLeg  # noqa: PLC0414

STATUS_FIELD = "status"
CURRENT = "current"
SUPERSEDED = "superseded"
MERGED_STATUS = "merged"  # an entity merged into another: kept for undo, left out of search
# Written by a graph commit that has not finished (``PendingVectors``): no search sees it, and the next open of the
# data dir settles it to what the graph committed (``KnowledgeStore.settle_pending``).
PENDING = "pending"


class VectorCollection(StrEnum):
    """The collections agrag keeps."""

    CHUNKS = "chunks"
    ENTITIES = "entities"
    COMMUNITIES = "communities"
    FACTS = "facts"  # one point per relation: subject, predicate, object and the sentence that states it


@dataclass(frozen=True, slots=True)
class VectorPoint:
    """A point to store: our id, its dense vector, the text of its keyword leg, and its payload."""

    id: str
    dense: Sequence[float]
    text: str
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A point found by a query, with its score (fused, or one leg's own for ``query_leg``) and payload."""

    id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StoredPoint:
    """A stored point read back by id: its payload and, when asked for, its normalized dense vector."""

    id: str
    dense: Sequence[float]
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PayloadFilter:
    """Exact-match conditions on payload fields; a tuple value means any of its values.

    Every ``equals`` condition must hold and no ``excludes`` condition may; a point without the field passes an
    ``excludes`` condition (so points written before a field existed are not lost). For a field holding a list, a
    condition holds when any of its values matches. A ``within`` condition holds when every value the field holds is
    one of the given values (a point without the field, or with an empty list, passes it): what keeps a fact whose
    passages span several documents out of a search limited to some of them.
    """

    # No bool values: qdrant-edge-py 0.9 matches a bool condition against nothing, so flags are keywords.
    equals: tuple[tuple[str, str | int | tuple[str, ...]], ...] = ()
    excludes: tuple[tuple[str, str | int | tuple[str, ...]], ...] = ()
    ids: frozenset[str] | None = None
    within: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def and_(self, key: str, value: str | int | tuple[str, ...]) -> PayloadFilter:
        """Return a filter with one more condition that must hold."""
        return PayloadFilter((*self.equals, (key, value)), self.excludes, self.ids, self.within)

    def and_not(self, key: str, value: str | int | tuple[str, ...]) -> PayloadFilter:
        """Return a filter with one more condition that must not hold."""
        return PayloadFilter(self.equals, (*self.excludes, (key, value)), self.ids, self.within)

    def and_within(self, key: str, values: tuple[str, ...]) -> PayloadFilter:
        """Return a filter that also needs every value of ``key`` to be one of ``values``."""
        return PayloadFilter(self.equals, self.excludes, self.ids, (*self.within, (key, tuple(values))))

    def only_ids(self, ids: Iterable[str]) -> PayloadFilter:
        """Return a filter that also keeps only these point ids (narrowing any earlier id condition)."""
        wanted = frozenset(ids)
        return PayloadFilter(self.equals, self.excludes, wanted if self.ids is None else self.ids & wanted, self.within)

    @property
    def empty(self) -> bool:
        """True when the filter lets every point through."""
        return not (self.equals or self.excludes or self.within) and self.ids is None


@runtime_checkable
class VectorStore(Protocol):
    """One collection of points with a dense and a keyword leg."""

    @property
    def collection(self) -> VectorCollection:
        """Which collection this store holds."""
        ...

    def upsert(self, points: Sequence[VectorPoint], status: str | None = None) -> None:
        """Insert or replace points by id; ``status``, if given, is stored in place of each payload's own."""
        ...

    def matching_ids(self, payload_filter: PayloadFilter) -> list[str]:
        """The ids of every stored point that passes ``payload_filter``, in any order."""
        ...

    def query(
        self, dense: Sequence[float], text: str, limit: int, payload_filter: PayloadFilter | None = None
    ) -> list[VectorHit]:
        """Return up to ``limit`` points, ranked by RRF of the dense and keyword legs."""
        ...

    def query_leg(
        self,
        leg: QueryLeg,
        dense: Sequence[float],
        text: str,
        limit: int,
        payload_filter: PayloadFilter | None = None,
    ) -> list[VectorHit]:
        """Return up to ``limit`` points by one leg alone, best first, with that leg's own score.

        Cosine of ``dense`` (DENSE) or BM25 of ``text`` (KEYWORD); a text with no indexed word gives no keyword hits.
        """
        ...

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Return which of ``ids`` are stored."""
        ...

    def fetch(self, ids: Sequence[str], with_vectors: bool = False) -> list[StoredPoint]:
        """Return the stored points among ``ids`` with their payloads (and dense vectors if asked), in any order."""
        ...

    def similarities(
        self, dense: Sequence[float], ids: Sequence[str], payload_filter: PayloadFilter | None = None
    ) -> dict[str, float]:
        """Cosine similarity of ``dense`` to each stored point among ``ids`` that passes the filter."""
        ...

    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        """Merge ``payload`` into the payload of the given points."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the given points; ids not stored are ignored."""
        ...

    def count(self) -> int:
        """Return the number of stored points."""
        ...

    def index_pending(self) -> bool:
        """Whether points wait to be indexed for search by ``optimize`` (False where the engine indexes by itself)."""
        ...

    def optimize(self) -> bool:
        """Index for search what ``index_pending`` says waits; True if anything was indexed."""
        ...

    def optimize_room(self) -> int:
        """Bytes of the data dir's disk ``optimize`` may write (0 where the engine indexes on its own disk)."""
        ...

    def close(self) -> None:
        """Flush and release the store."""
        ...
