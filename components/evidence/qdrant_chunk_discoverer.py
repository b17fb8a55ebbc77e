"""``QdrantChunkDiscoverer``: the passages ``discover`` finds, by keyword, by meaning, or both fused by rank."""

from __future__ import annotations

from typing import TypedDict

from haystack import component

from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.evidence import DiscoverMode
from agrag.components.data_models.query_leg import QueryLeg
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.errors import RetrievalError
from agrag.components.joiners.rrf_joiner import RRFJoiner
from agrag.components.retrievers.filter_conditions import payload_filter_for
from agrag.components.retrievers.guarded_run import guarded_filtered_run
from agrag.components.retrievers.qdrant_chunk_retriever import CURRENT_ONLY
from agrag.components.stores.vector_payloads import chunk_from_payload
from agrag.components.stores.vector_store import PayloadFilter, VectorCollection, VectorStore

EVIDENCE_RRF_K = 60  # fixed by the spec for evidence discovery, whatever RETRIEVAL_RRF_K says
CANDIDATES_PER_RESULT = 4  # each leg fetches this many candidates per result asked for
MAX_CANDIDATES = 200
LEGS = {
    DiscoverMode.KEYWORD: (QueryLeg.KEYWORD,),
    DiscoverMode.VECTOR: (QueryLeg.DENSE,),
    DiscoverMode.HYBRID: (QueryLeg.DENSE, QueryLeg.KEYWORD),
}


class DiscoverOutput(TypedDict):
    """What ``QdrantChunkDiscoverer.run`` returns.

    Attributes:
        results: The chunks found, best first, at most the limit asked for; each result's ``methods`` are the legs
            that found it (``dense``, ``keyword``), best rank first, and its score is the fused RRF score.
        failed_legs: Leg name → why it failed (``"ExceptionType: message"``); the other leg's hits still come back.
        truncated: True when more passages matched than were returned (a leg filled its candidate list, or the
            fused list was longer than the limit).
    """

    results: list[SearchResult]
    failed_legs: dict[str, str]
    truncated: bool


@component
class QdrantChunkDiscoverer:
    """Finds current passages for the evidence tools: each leg on its own, fused by Reciprocal Rank Fusion (k = 60).

    Unlike the recipe ``chunk`` method (``QdrantChunkRetriever``, which lets the store fuse its legs), each leg runs
    as a method of its own, so a failing leg is reported by name while the other's hits still return, and the
    result says which legs found each passage. A leg asks for ``4 x limit`` candidates (at most 200), so whether more
    passages matched than were returned is known. Filters run inside the store query, as for every retriever.

    Usage:
        ```python
        discoverer = QdrantChunkDiscoverer(store.chunks)
        out = discoverer.run(query="Who wrote the Orion Planner?", query_embedding=vector, limit=5)
        ```
    """

    def __init__(self, store: VectorStore, rrf_k: int = EVIDENCE_RRF_K) -> None:
        """Search ``store`` (the chunks collection); ``rrf_k`` is the fusion's k (60 is what the spec fixes)."""
        self.store = store
        self.joiner = RRFJoiner(k=rrf_k)

    @staticmethod
    def needs_embedding(mode: DiscoverMode) -> bool:
        """Whether ``mode`` runs the dense leg, so ``run`` needs the query's embedding."""
        return QueryLeg.DENSE in LEGS[mode]

    @component.output_types(results=list[SearchResult], failed_legs=dict[str, str], truncated=bool)
    def run(
        self,
        query: str,
        mode: DiscoverMode = DiscoverMode.HYBRID,
        limit: int = 10,
        query_embedding: Embedding | None = None,
        filters: SearchFilters | None = None,
    ) -> DiscoverOutput:
        """Search the current chunks within ``filters`` for ``query`` by the legs of ``mode``.

        Args:
            query: The text of the keyword (BM25) leg.
            mode: ``keyword``, ``vector`` (dense) or ``hybrid`` (both).
            limit: The most results returned.
            query_embedding: The query's embedding, needed by the dense leg (``needs_embedding``).
            filters: Limits applied in the store query (``document_ids``, chunk ``properties``); empty
                ``document_ids`` means every document.

        Raises:
            RetrievalError: ``limit`` below 1, or a dense leg without ``query_embedding``.
        """
        if limit < 1:
            raise RetrievalError(f"discover needs a limit of at least 1, got {limit}.")
        if query_embedding is None and self.needs_embedding(mode):
            raise RetrievalError(f"discover mode {mode.value!r} needs the query's embedding.")
        dense = query_embedding.values if query_embedding is not None else ()
        candidates = min(limit * CANDIDATES_PER_RESULT, MAX_CANDIDATES)
        ranked: list[list[SearchResult]] = []
        failed: dict[str, str] = {}
        for leg in LEGS[mode]:

            def search(condition: PayloadFilter, leg: QueryLeg = leg) -> list[SearchResult]:
                hits = self.store.query_leg(leg, dense, query, candidates, condition)
                return [SearchResult(chunk_from_payload(h), h.score, leg, (leg,)) for h in hits]

            out = guarded_filtered_run(
                leg.value, lambda: payload_filter_for(VectorCollection.CHUNKS, CURRENT_ONLY, filters), search
            )
            if out["status"].ok:
                ranked.append(out["results"])
            else:
                failed[leg.value] = out["status"].error or "the leg failed"
        fused = self.joiner.run(results=ranked)["results"]
        truncated = len(fused) > limit or any(len(hits) >= candidates for hits in ranked)
        return {"results": fused[:limit], "failed_legs": failed, "truncated": truncated}
