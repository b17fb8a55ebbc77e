"""What both Qdrant backends share: point ids, the BM25 encoder, and the names of the two vectors."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable
from typing import Any, cast

import qdrant_edge

from agrag.components.stores.vector_store import StoredPoint, VectorHit

DENSE_VECTOR = "dense"
KEYWORD_VECTOR = "bm25"
ITEM_ID_FIELD = "item_id"
# Candidates each leg hands to the in-store fusion, per result asked for.
PREFETCH_FACTOR = 4
MIN_PREFETCH = 40

_NAMESPACE = uuid.UUID("6f1c8f0e-2b7a-4c61-9a57-6a1f2f4c9d11")


@functools.lru_cache(maxsize=2**16)  # the chunks of hub relations come back query after query
def point_uuid(item_id: str) -> str:
    """Qdrant ids must be UUIDs or integers; ours are strings, so each maps to a fixed UUID."""
    return str(uuid.uuid5(_NAMESPACE, item_id))


def prefetch_limit(limit: int) -> int:
    """How many candidates each leg returns before fusion."""
    return max(MIN_PREFETCH, limit * PREFETCH_FACTOR)


# RRF of integer ranks ties often and Qdrant orders ties arbitrarily; fusion returns this many extra points so
# that ties at the cut are settled by id, and the same query always gives the same list.
TIE_MARGIN = 10


def settle_ties(hits: list[VectorHit], limit: int) -> list[VectorHit]:
    """Order by score, then by id, and keep ``limit``."""
    return sorted(hits, key=lambda h: (-h.score, h.id))[:limit]


def bm25_encoder() -> qdrant_edge.Bm25:
    """The one BM25 tokenizer and weighting both backends use, so the keyword leg behaves the same on each."""
    return qdrant_edge.Bm25(qdrant_edge.Bm25Config(language="english"))


def stored_points(records: Iterable[Any]) -> list[StoredPoint]:
    """Records retrieved by either backend (``.payload``, ``.vector`` as ``{name: list}``) as ``StoredPoint``s."""
    return [
        StoredPoint(
            r.payload[ITEM_ID_FIELD],
            cast(list[float], r.vector[DENSE_VECTOR]) if isinstance(r.vector, dict) else (),
            r.payload,
        )
        for r in records
        if r.payload
    ]
