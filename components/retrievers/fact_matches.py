"""Facts that match a query vector, within a search's filters: the seeds a fact-seeded graph walk starts from.

Every condition runs inside the facts collection's query (``fact_condition``): current facts only, of the filter's
relation types, and within a document scope only facts every passage of which is in it.

Usage:
    ```python
    matches = match_facts(store.facts, query_vector, limit=20, filters=SearchFilters(document_ids=("d3f…",)))
    seeds = {m.source_id: m.similarity for m in matches}  # entity records: resolve them before a walk
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.retrievers.filter_conditions import payload_filter_for
from agrag.components.stores.vector_payloads import CHUNK_IDS
from agrag.components.stores.vector_store import (
    CURRENT,
    STATUS_FIELD,
    PayloadFilter,
    QueryLeg,
    VectorCollection,
    VectorHit,
    VectorStore,
)

CURRENT_FACTS = PayloadFilter(((STATUS_FIELD, CURRENT),))


@dataclass(frozen=True, slots=True)
class FactMatch:
    """One fact a query matched.

    Attributes:
        relation_id: The relation's id (the fact's).
        source_id: The entity record it starts from, as extracted (resolve it: a merge does not rewrite it).
        target_id: The entity record it points to.
        type: Its predicate.
        similarity: Cosine similarity of the query vector and the fact's vector (-1 to 1).
        chunk_ids: The current passages that state it (within the scope, since every one of them is in it).
    """

    relation_id: str
    source_id: str
    target_id: str
    type: str
    similarity: float
    chunk_ids: tuple[str, ...]


def fact_condition(filters: SearchFilters | None) -> PayloadFilter:
    """The payload filter of a fact search under ``filters``: current facts, narrowed as ``payload_filter_for`` says."""
    return payload_filter_for(VectorCollection.FACTS, CURRENT_FACTS, filters)


def match_facts(
    facts: VectorStore,
    query_vector: Sequence[float],
    limit: int,
    filters: SearchFilters | None = None,
    *,
    query_text: str | None = None,
) -> list[FactMatch]:
    """Up to ``limit`` facts, best first, each with its cosine similarity to ``query_vector``.

    Ranked by the dense leg alone, or, given ``query_text``, by the fusion of the dense and keyword legs (the
    ``fact`` method's order); the similarity is the cosine either way.
    """
    condition = fact_condition(filters)
    if query_text is None:
        hits = facts.query_leg(QueryLeg.DENSE, query_vector, "", limit, condition)
        cosine = {h.id: h.score for h in hits}
    else:
        hits = facts.query(query_vector, query_text, limit, condition)
        cosine = facts.similarities(query_vector, [h.id for h in hits], condition)
    return [_match(h, cosine.get(h.id, 0.0)) for h in hits]


def _match(hit: VectorHit, similarity: float) -> FactMatch:
    p = hit.payload
    return FactMatch(
        hit.id,
        str(p["source_id"]),
        str(p["target_id"]),
        str(p.get("type", "")),
        float(similarity),
        tuple(p.get(CHUNK_IDS, ())),
    )
