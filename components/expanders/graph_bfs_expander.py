"""``GraphBfsExpander``: the graph walk step, the neighbours of a search's entity hits."""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from haystack import component

from agrag.components import defaults
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.entity import Entity, normalize_name
from agrag.components.data_models.entity_type import EntityType
from agrag.components.data_models.method_output import WalkOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.retrieval_method import SearchStep
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.data_models.traversal_direction import TraversalDirection
from agrag.components.retrievers.chunk_parents import parents_of
from agrag.components.retrievers.filter_conditions import payload_filter_for
from agrag.components.retrievers.guarded_run import guarded_run
from agrag.components.retrievers.qdrant_chunk_retriever import CURRENT_ONLY
from agrag.components.retrievers.qdrant_entity_retriever import entity_passes
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.store_backed import StoreBacked
from agrag.components.stores.store_ref import StoreRef, chunks_part, graph_part
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_payloads import chunk_from_payload
from agrag.components.stores.vector_store import VectorCollection, VectorHit, VectorStore

# Passages of the walk: a chunk's score is its cosine to the query plus LINK_BONUS per log(1 + links), where links
# counts the seeds it mentions and the walked relations it states, so "the chunk that names both" rises. 0.095 since
# relations are typed facts (more of them, each stated by fewer chunks): R@5 HotpotQA 82.5 -> 83.5, MuSiQue 63.7 ->
# 64.1 with TRAVERSAL_PER_HOP 30 (README, Retrieval quality).
LINK_BONUS = 0.095
WALK_CANDIDATES = 100  # relations walked when passages are wanted (the result list still keeps ``limit``)
MENTIONS_PER_SEED = 50  # a hub seed's chunks that become passage candidates, best supporting first
# A walked relation's chunks that become passage candidates: those linked most (then by id). A relation between hubs
# is stated by thousands of chunks at 100,000 chunks, and scoring each against the query cost most of a walk.
CHUNKS_PER_RELATION = 50


@component
class GraphBfsExpander(StoreBacked):
    """Walks the relations outward from the first entity hits of a result list and returns what it reaches.

    The seeds are the first ``seeds`` entities of the incoming (fused) results. The walk goes ``depth`` hops in
    both directions, keeps the ``per_hop`` best supported relations of each hop, and never expands an entity twice.
    ``results`` holds the entities reached (never the seeds) and the relations walked, nearest hop first, then most
    supporting chunks first, at most ``limit`` of them, each with the method ``bfs``.

    With a chunk store and the query's embedding, ``passages`` holds the chunks that state the walk: those naming a
    seed and those a walked relation was extracted from, most similar to the query first, with a bonus for a chunk
    that ties several of them together (at most ``limit``, current versions only, narrowed by the search's
    filters). They make the walk's answer traceable to source text, and they reach the second passage of a
    two-step question, which no similarity search of the question finds. A failure is reported in ``status`` and
    gives no results, so the search still returns what its methods found. Built from open stores or from a
    ``StoreSpec`` (opened in ``warm_up``), it serializes as the spec.

    Usage:
        ```python
        expander = GraphBfsExpander(store.graph, depth=2, chunks=store.chunks)
        out = expander.run(results=fused, query_embedding=vector)
        neighbours, passages = out["results"], out["passages"]
        ```
    """

    def __init__(
        self,
        graph: GraphStore | StoreSpec,
        depth: int = defaults.TRAVERSAL_DEPTH,
        per_hop: int = defaults.TRAVERSAL_PER_HOP,
        limit: int = 50,
        seeds: int = 5,
        *,
        method: SearchStep | str = SearchStep.BFS,
        chunks: VectorStore | StoreSpec | None = None,
    ) -> None:
        """Walk ``graph``; with ``chunks`` (the chunks collection), also rank the walk's passages.

        Either may be a ``StoreSpec``: the graph, or the chunks collection, of the data dir it names.
        """
        self._graph = StoreRef(graph, graph_part)
        self.depth = depth
        self.per_hop = per_hop
        self.limit = limit
        self.seeds = seeds
        self.method = SearchStep.from_str(method)
        self._chunks = None if chunks is None else StoreRef(chunks, chunks_part)

    @property
    def graph(self) -> GraphStore:
        """The graph store walked (opened from its spec on first use)."""
        return self._graph.get()

    @property
    def chunks(self) -> VectorStore | None:
        """The chunks collection the walk's passages are ranked in, if given."""
        return None if self._chunks is None else self._chunks.get()

    def _store_refs(self) -> dict[str, StoreRef[Any] | None]:
        return {"graph": self._graph, "chunks": self._chunks}

    def _plain_params(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "per_hop": self.per_hop,
            "limit": self.limit,
            "seeds": self.seeds,
            "method": self.method.value,
        }

    @component.output_types(results=list[SearchResult], passages=list[SearchResult], status=MethodStatus)
    def run(
        self,
        results: list[SearchResult],
        relation_types: list[str] | None = None,
        depth: int | None = None,
        query_embedding: Embedding | None = None,
        filters: SearchFilters | None = None,
        *,
        query: str | None = None,
    ) -> WalkOutput:
        """Walk the graph from the entity hits of ``results``.

        Args:
            results: The fused results; their first entities are the seeds.
            relation_types: Only cross relations of these types (None: all).
            depth: Hops of the walk (None: the expander's ``depth``).
            query_embedding: The query's embedding; with it (and a chunk store) the walk's passages are ranked.
            query: The query's text: a date entity hit seeds the walk only if the query names it.
            filters: Keep to them: under ``document_ids`` only relations every source passage of which is in the
                documents are crossed, between entities they name, each named as they name it; ``labels`` and
                ``properties`` drop the entities reached that do not match (and, for ``properties``, every relation,
                which stores none); the passages are narrowed like the chunk method's results.

        Returns:
            ``results``: the entities and relations reached, nearest first; ``passages``: the chunks that state
            them, best first; ``status``: how the walk went.
        """
        seed_ids = seed_entities(results, self.seeds, query)
        passages: list[SearchResult] = []
        with_passages = self.chunks is not None and query_embedding is not None

        def search() -> list[SearchResult]:
            if not seed_ids or self.limit <= 0:
                return []
            walked = self.limit if not with_passages else max(self.limit, WALK_CANDIDATES)
            documents = filters.document_ids if filters is not None and filters.document_ids else None
            steps = self._steps(seed_ids, relation_types, TraversalDirection.BOTH, depth, walked, documents=documents)
            if with_passages and query_embedding is not None:
                passages.extend(self._passages(seed_ids, steps, query_embedding, filters))
            return self._ranked(seed_ids, steps, self.limit, filters)

        out = guarded_run(self.method, search)
        status = out["status"]
        if not status.ok:
            return {"results": out["results"], "passages": [], "status": status}
        return {
            "results": out["results"],
            "passages": passages,
            "status": replace(status, count=status.count + len(passages)),
        }

    def walk(
        self,
        seed_ids: Sequence[str],
        relation_types: Sequence[str] | None = None,
        *,
        direction: TraversalDirection | str = TraversalDirection.BOTH,
        depth: int | None = None,
        limit: int | None = None,
    ) -> list[SearchResult]:
        """Walk from ``seed_ids``: the relations and entities reached, nearest first; raises on a store failure.

        Raises:
            UnknownTraversalDirectionError: ``direction`` is not ``both``, ``out`` or ``in``.
        """
        way = TraversalDirection.from_str(direction)
        limit = self.limit if limit is None else limit
        if not seed_ids or limit <= 0:
            return []
        return self._ranked(seed_ids, self._steps(seed_ids, relation_types, way, depth, limit), limit)

    def _steps(
        self,
        seed_ids: Sequence[str],
        relation_types: Sequence[str] | None,
        direction: TraversalDirection,
        depth: int | None,
        limit: int,
        *,
        documents: Sequence[str] | None = None,
    ) -> list[tuple[Relation, int]]:
        if documents is not None:
            walked = self.graph.scoped_relations(
                seed_ids, documents, relation_types=relation_types, depth=depth or self.depth, per_hop=self.per_hop,
                limit=limit,
            )  # fmt: skip
            return [(relation, hop) for relation, hop, _ in walked]
        return self.graph.traverse(
            seed_ids, relation_types, direction=direction, depth=depth or self.depth, per_hop=self.per_hop, limit=limit
        )

    def _ranked(
        self,
        seed_ids: Sequence[str],
        steps: list[tuple[Relation, int]],
        limit: int,
        filters: SearchFilters | None = None,
    ) -> list[SearchResult]:
        seeds = set(seed_ids)
        documents = filters.document_ids if filters is not None and filters.document_ids else None
        keep_relations = filters is None or not filters.properties
        ranked: list[tuple[tuple[int, int, int, str], Entity | Relation]] = []
        # An entity is reached at the first hop of a relation touching it; its support is that of those relations.
        reached: dict[str, tuple[int, int]] = {}
        for relation, hop in steps:
            support = len(relation.chunk_ids)
            if keep_relations:
                ranked.append(((hop, -support, 1, relation.id), relation))
            for end in (relation.source_id, relation.target_id):
                if end in seeds:
                    continue
                first_hop, total = reached.get(end, (hop, 0))
                if hop == first_hop:
                    reached[end] = (hop, total + support)
        ends = self.graph.get_entities(list(reached)) if documents is None else self.graph.visible_entities(
            list(reached), documents
        )  # fmt: skip
        for entity in ends:
            if entity.id not in reached or not entity_passes(entity, filters):
                continue
            hop, support = reached[entity.id]
            ranked.append(((hop, -support, 0, entity.id), entity))
        ranked.sort(key=lambda pair: pair[0])
        return [
            SearchResult(item, 1.0 / (1 + rank), self.method, (self.method,))
            for rank, (_, item) in enumerate(ranked[:limit])
        ]

    def _passages(
        self,
        seed_ids: Sequence[str],
        steps: list[tuple[Relation, int]],
        query_embedding: Embedding,
        filters: SearchFilters | None,
    ) -> list[SearchResult]:
        assert self.chunks is not None  # checked by the caller
        # Counted in C (Counter.update): a hub relation at 1,000,000 chunks lists thousands of supporting chunks.
        links: Counter[str] = Counter()
        for chunk_ids in self.graph.supporting_chunk_ids(list(seed_ids), limit=MENTIONS_PER_SEED).values():
            links.update(chunk_ids)
        candidates = set(links)
        for relation, _ in steps:
            links.update(relation.chunk_ids)
        for relation, _ in steps:
            candidates.update(_most_linked(relation.chunk_ids, links))
        if not candidates:
            return []
        condition = payload_filter_for(VectorCollection.CHUNKS, CURRENT_ONLY, filters)
        cosines = self.chunks.similarities(query_embedding.values, sorted(candidates), condition)
        scores = {c: cosine + LINK_BONUS * math.log1p(links[c]) for c, cosine in cosines.items()}
        best = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))[: self.limit]
        payloads = {p.id: p.payload for p in self.chunks.fetch(best)}
        chunks = [chunk_from_payload(VectorHit(c, scores[c], payloads[c])) for c in best if c in payloads]
        parents = parents_of(self.graph, chunks)
        return [
            SearchResult(c, scores[c.id], self.method, (self.method,), parents.get(c.parent_id or "")) for c in chunks
        ]


def _most_linked(chunk_ids: Sequence[str], links: Mapping[str, int]) -> Sequence[str]:
    """The first ``CHUNKS_PER_RELATION`` of a relation's chunks, most linked first, then by id."""
    if len(chunk_ids) <= CHUNKS_PER_RELATION:
        return chunk_ids
    # the few first of thousands: a heap of CHUNKS_PER_RELATION, not a sort of them all
    shared = heapq.nsmallest(CHUNKS_PER_RELATION, (c for c in chunk_ids if links[c] > 1), key=lambda c: (-links[c], c))
    rest = heapq.nsmallest(CHUNKS_PER_RELATION - len(shared), (c for c in chunk_ids if links[c] == 1))
    return [*shared, *rest]


def seed_entities(results: Sequence[SearchResult], names: int, query: str | None = None) -> list[str]:
    """The ids of the first entity hits that give ``names`` distinct names, best first.

    A name typed two ways ("Midway" a place and a name) is several entities; they are one seed, so a question's
    second name is not crowded out by its first name's types. A date is a seed only when ``query`` names it: found
    for its closeness alone, "May 2025" ties notes by when, not by what they are about, and walks everywhere.
    """
    asked = normalize_name(query) if query else ""
    seen: dict[str, None] = {}
    ids: dict[str, None] = {}
    for result in results:
        if not isinstance(result.item, Entity):
            continue
        key = normalize_name(result.item.name)
        if result.item.label == EntityType.DATE.value and key not in asked:
            continue
        if key not in seen and len(seen) == names:
            break
        seen.setdefault(key, None)
        ids.setdefault(result.item.id, None)
    return list(ids)
