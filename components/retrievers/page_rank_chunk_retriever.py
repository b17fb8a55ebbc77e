"""``PageRankChunkRetriever``: the ``ppr`` method, multi-hop passages by a graph walk from the names in a query."""

from __future__ import annotations

import math
from typing import Any

from haystack import component
from haystack.core.serialization import default_from_dict, default_to_dict

from agrag.components import defaults
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.retrieval_method import RetrievalMethod
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.graph.bridge_hop import BridgeHop, BridgeHopSettings
from agrag.components.graph.passage_graph import PassageGraph
from agrag.components.graph.passage_graph_cache import PassageGraphCache
from agrag.components.retrievers.filter_conditions import payload_filter_for
from agrag.components.retrievers.guarded_run import guarded_run
from agrag.components.retrievers.qdrant_chunk_retriever import CURRENT_ONLY
from agrag.components.retrievers.query_names import query_name_groups
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.store_ref import StoreRef, chunks_part, entities_part
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_payloads import chunk_from_payload
from agrag.components.stores.vector_store import PayloadFilter, QueryLeg, VectorCollection, VectorHit, VectorStore

WALK_CANDIDATES = 300  # chunks with the most walk mass that get a similarity score
SEARCH_CANDIDATES = 100  # chunks from the ordinary chunk search that get one too
MASS_FLOOR = 1e-4  # lets a chunk the walk never reached still rank on similarity alone


@component
class PageRankChunkRetriever:
    """Ranks chunks by a personalized PageRank from the entities the query names, weighted by query similarity.

    The walk (HippoRAG's) runs on the graph of current chunks and the entities they mention or are about, restarting
    at the entities whose names appear in the query. It reaches the second and third passage of a multi-hop
    question through the names they share, which similarity search alone misses. Each candidate's score is
    ``(mass / top mass + 1e-4) * exp(cosine / temperature)``: the walk chooses, similarity orders within it. A query
    that names no known entity is ranked by similarity alone, or, with the bridge round, walks from the entities
    of the passages that match it best. The graph snapshot is rebuilt only after a write.
    Built from open stores or from a ``StoreSpec`` (opened in ``warm_up``), it serializes as the spec.

    Usage:
        ```python
        retriever = PageRankChunkRetriever(store.graph, store.chunks, top_k=10)
        out = retriever.run(query="Where did the author of the Atlas Controller study?", query_embedding=vector)
        ```
    """

    def __init__(
        self,
        graph_store: GraphStore | StoreSpec,
        chunk_store: VectorStore | StoreSpec,
        *,
        top_k: int = 10,
        damping: float = defaults.PPR_DAMPING,
        temperature: float = defaults.PPR_TEMPERATURE,
        method: RetrievalMethod | str = RetrievalMethod.PPR,
        snapshots: PassageGraphCache | None = None,
        entity_store: VectorStore | StoreSpec | None = None,
        bridge: BridgeHopSettings | None = None,
    ) -> None:
        """``snapshots`` shares the graph snapshot with the engine's other methods (None: this retriever's own).

        The stores may be given as a ``StoreSpec``: the graph and the chunks collection of the data dir it names.
        With ``entity_store`` (the entities collection) the walk is followed by a bridge round (``BridgeHop``):
        the passages naming the specific entities of the best walked passages, asked about with the question joined
        to each entity's vector, are fused with the walk's list below its first passages.
        """
        self._chunk_store = StoreRef(chunk_store, chunks_part)
        self._entity_store = StoreRef(entity_store, entities_part) if entity_store is not None else None
        self.bridge = BridgeHop(bridge)
        self.top_k = top_k
        self.damping = damping
        self.temperature = temperature
        self.method = RetrievalMethod.from_str(method)
        self.snapshots = snapshots or PassageGraphCache(graph_store)

    @property
    def graph_store(self) -> GraphStore:
        """The graph store the walk's snapshot is read from (opened from its spec on first use)."""
        return self.snapshots.graph_store

    @property
    def chunk_store(self) -> VectorStore:
        """The chunks collection (opened from its spec on first use)."""
        return self._chunk_store.get()

    def warm_up(self) -> None:
        """Open the stores named by spec (the ones this process holds, else opened now)."""
        self._chunk_store.get()
        if self._entity_store is not None:
            self._entity_store.get()
        self.snapshots.graph_store  # noqa: B018 - opens the graph store

    def to_dict(self) -> dict[str, Any]:
        """Serialize with the store spec in place of the open stores."""
        # the snapshot cache is not written: a loaded retriever builds its own over the same graph
        return default_to_dict(
            self,
            graph_store=self.snapshots.to_dict()["init_parameters"]["graph_store"],
            chunk_store=self._chunk_store.spec(type(self).__name__),
            top_k=self.top_k,
            damping=self.damping,
            temperature=self.temperature,
            method=self.method.value,
            entity_store=self._entity_store.spec(type(self).__name__) if self._entity_store is not None else None,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageRankChunkRetriever:
        """Deserialize a retriever written by ``to_dict``; its stores open in ``warm_up``."""
        return default_from_dict(cls, data)

    def graph(self) -> PassageGraph:
        """The passage-entity graph, read again from the store only when its generation changed."""
        return self.snapshots.get()

    @component.output_types(results=list[SearchResult], status=MethodStatus)
    def run(
        self, query: str, query_embedding: Embedding, top_k: int | None = None, filters: SearchFilters | None = None
    ) -> MethodOutput:
        """Search chunks for ``query`` within ``filters``.

        Under ``document_ids`` the walk runs on the passage graph of those documents' current chunks alone, and
        every candidate must pass the filters' chunk conditions (document ids, chunk properties) in the store query.

        Returns:
            ``results``: chunks best first, each with this method's name; ``status``: how the method went.
        """
        return guarded_run(self.method, lambda: self._search(query, query_embedding, top_k or self.top_k, filters))

    def _search(
        self, query: str, query_embedding: Embedding, limit: int, filters: SearchFilters | None = None
    ) -> list[SearchResult]:
        documents = filters.document_ids if filters is not None else ()
        graph = self.snapshots.scoped(documents) if documents else self.graph()
        condition = payload_filter_for(VectorCollection.CHUNKS, CURRENT_ONLY, filters)
        groups = query_name_groups(query, graph.entities_named)
        seeds = [e for group in groups for e in group]
        searched = self.chunk_store.query(query_embedding.values, query, SEARCH_CANDIDATES, condition)
        if not seeds and self._entity_store is not None:  # a question that names nothing, asked with the bridge round
            seeds = self.bridge.passage_seeds(graph, [hit.id for hit in searched])
        mass = graph.personalized_pagerank(seeds, self.damping, weights=graph.name_weights(groups))
        walked = mass.top(WALK_CANDIDATES)
        candidates = list(dict.fromkeys([*walked, *(hit.id for hit in searched)]))
        cosines = self.chunk_store.similarities(query_embedding.values, candidates, condition)
        top_mass = mass.peak() or 1.0
        scores = {
            chunk_id: (mass.get(chunk_id, 0.0) / top_mass + MASS_FLOOR) * math.exp(cosine / self.temperature)
            for chunk_id, cosine in cosines.items()
        }
        best = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))
        if self._entity_store is not None and best:
            scores = self._with_bridges(
                graph, best, seeds, query=query, query_embedding=query_embedding, condition=condition
            )
            best = list(scores)
        best = best[:limit]
        payloads = {p.id: p.payload for p in self.chunk_store.fetch(best)}
        return [
            SearchResult(
                chunk_from_payload(VectorHit(chunk_id, scores[chunk_id], payloads[chunk_id])),
                scores[chunk_id],
                self.method,
                (self.method,),
            )
            for chunk_id in best
            if chunk_id in payloads
        ]

    def _with_bridges(
        self,
        graph: PassageGraph,
        walked: list[str],
        seeds: list[str],
        *,
        query: str,
        query_embedding: Embedding,
        condition: PayloadFilter,
    ) -> dict[str, float]:
        """The walk's ranking fused with the bridge round's (RRF), its first passages kept first; chunk -> score."""
        assert self._entity_store is not None
        entities = self._entity_store.get()
        first = walked[: self.bridge.settings.first]
        bridges = self.bridge.bridges(graph, first, seeds)
        second = self.bridge.rank(
            bridges,
            query_embedding.values,
            lambda vector, ids: self.chunk_store.similarities(vector, list(ids), condition),
            lambda ids: {p.id: p.dense for p in entities.fetch(list(ids), with_vectors=True) if p.dense},
            lambda ids: [
                hit.id
                for hit in self.chunk_store.query_leg(
                    QueryLeg.KEYWORD, query_embedding.values, query, len(ids), condition.only_ids(ids)
                )
            ],
        )
        fused: dict[str, float] = {}
        for rank, chunk_id in enumerate(walked):
            fused[chunk_id] = 1.0 / (defaults.BRIDGE_RRF_K + rank)
        for rank, chunk_id in enumerate(second):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + defaults.BRIDGE_RRF_WEIGHT / (defaults.BRIDGE_RRF_K + rank)
        rest = sorted((c for c in fused if c not in first), key=lambda c: (-fused[c], c))
        order = [*first, *rest]
        # scores fall with the order: the first passages' above every fused one
        return {chunk_id: float(len(order) - rank) / len(order) for rank, chunk_id in enumerate(order)}
