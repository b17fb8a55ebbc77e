"""``NodeDistanceReranker``: re-orders results by their hop distance in the graph to the top entity hits."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from haystack import component

from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.retrieval_method import SearchStep
from agrag.components.data_models.search_result import SearchItem, SearchResult
from agrag.components.stores.graph_store import GENERATION_KEY, GraphStore
from agrag.components.stores.store_backed import StoreBacked
from agrag.components.stores.store_ref import StoreRef, graph_part
from agrag.components.stores.store_spec import StoreSpec


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """The entity graph as undirected adjacency, and the entities each current chunk mentions or is about."""

    neighbors: dict[str, set[str]]
    chunk_entities: dict[str, set[str]]

    @classmethod
    def read(cls, graph: GraphStore) -> _Snapshot:
        neighbors: dict[str, set[str]] = {}
        for a, b, _ in graph.entity_graph()[1]:
            neighbors.setdefault(a, set()).add(b)
            neighbors.setdefault(b, set()).add(a)
        chunk_entities: dict[str, set[str]] = {}
        edges = graph.passage_edges()
        for chunk_id, entity_id in (*edges.mentions, *edges.about):
            chunk_entities.setdefault(chunk_id, set()).add(entity_id)
        return cls(neighbors, chunk_entities)

    def hops(self, seeds: Iterable[str], max_depth: int) -> dict[str, int]:
        """Breadth-first hops from the nearest seed, for the entities at most ``max_depth`` hops away."""
        distance = dict.fromkeys(seeds, 0)
        frontier = list(distance)
        for depth in range(1, max_depth + 1):
            reached = [n for node in frontier for n in self.neighbors.get(node, ()) if n not in distance]
            distance.update(dict.fromkeys(reached, depth))
            frontier = list(dict.fromkeys(reached))
        return distance


@component
class NodeDistanceReranker(StoreBacked):
    """Orders results by how many relations separate them from the query's top entity hits.

    The seeds are the first ``top_entities`` entities of the incoming list. An entity's distance is its number of
    hops (relations, either direction) from the nearest seed; a chunk's, the least over the entities it mentions or
    is about; a community's, the least over its members; a relation's, the lesser of its two ends. Anything farther
    than ``max_depth`` hops, unconnected or unknown (a text2cypher row) gets ``max_depth + 1``. Results are sorted
    by distance, ties in incoming order, and scored ``1 / (1 + distance)``. Without an entity in the list the
    results pass unchanged. The graph snapshot is read again only when the store's generation changed. Built from
    the open graph store or from a ``StoreSpec`` (opened in ``warm_up``), it serializes as the spec.

    Usage:
        ```python
        reranker = NodeDistanceReranker(store.graph, top_entities=3, max_depth=3)
        reordered = reranker.run(results=fused)["results"]
        ```
    """

    def __init__(self, graph: GraphStore | StoreSpec, top_entities: int = 3, max_depth: int = 3) -> None:
        if top_entities < 1:
            raise ComponentConfigError(
                "NodeDistanceReranker",
                f"it needs at least 1 seed entity, got top_entities={top_entities}",
                "Pass top_entities=1 or more.",
            )
        if max_depth < 0:
            raise ComponentConfigError(
                "NodeDistanceReranker", f"max_depth must be 0 or more, got {max_depth}", "Pass max_depth=0 or more."
            )
        self._graph_store = StoreRef(graph, graph_part)
        self.top_entities = top_entities
        self.max_depth = max_depth
        self._snapshot: tuple[str, _Snapshot] | None = None
        self._lock = threading.Lock()

    @property
    def graph(self) -> GraphStore:
        """The graph store distances are measured in (opened from its spec on first use)."""
        return self._graph_store.get()

    def _store_refs(self) -> dict[str, StoreRef[Any] | None]:
        return {"graph": self._graph_store}

    def _plain_params(self) -> dict[str, Any]:
        return {"top_entities": self.top_entities, "max_depth": self.max_depth}

    @component.output_types(results=list[SearchResult], status=MethodStatus)
    def run(self, results: list[SearchResult]) -> MethodOutput:
        """Re-order ``results`` by graph distance to their first ``top_entities`` entities.

        Returns:
            ``results``: nearest first, each scored ``1 / (1 + distance)``, unchanged if no result is an entity;
            ``status``: the step's count and time, for the trace.
        """
        started = time.perf_counter()
        ordered = self._order(results)
        elapsed = (time.perf_counter() - started) * 1000
        return {
            "results": ordered,
            "status": MethodStatus(SearchStep.RERANK, ok=True, count=len(ordered), elapsed_ms=elapsed),
        }

    def _order(self, results: list[SearchResult]) -> list[SearchResult]:
        seeds = [r.item.id for r in results if isinstance(r.item, Entity)][: self.top_entities]
        if not seeds:
            return results
        snapshot = self._graph()
        hops = snapshot.hops(seeds, self.max_depth)
        distances = [self._distance(r.item, snapshot, hops) for r in results]
        order = sorted(range(len(results)), key=lambda i: distances[i])  # a stable sort: ties keep incoming order
        return [replace(results[i], score=1.0 / (1.0 + distances[i])) for i in order]

    def _graph(self) -> _Snapshot:
        # As PageRankChunkRetriever does: a snapshot per instance, read again only after a committed write. A store
        # that records no generation cannot say when it changed, so it is read on every run.
        generation = self.graph.info().get(GENERATION_KEY, "")
        with self._lock:
            if not generation or self._snapshot is None or self._snapshot[0] != generation:
                self._snapshot = (generation, _Snapshot.read(self.graph))
            return self._snapshot[1]

    def _distance(self, item: SearchItem, snapshot: _Snapshot, hops: dict[str, int]) -> int:
        if isinstance(item, Entity):
            entity_ids: Iterable[str] = (item.id,)
        elif isinstance(item, Chunk):
            entity_ids = snapshot.chunk_entities.get(item.id, ())
        elif isinstance(item, Community):
            entity_ids = item.entity_ids
        elif isinstance(item, Relation | Fact):
            entity_ids = (item.source_id, item.target_id)
        else:
            entity_ids = ()
        return min((hops.get(e, self.max_depth + 1) for e in entity_ids), default=self.max_depth + 1)
