"""``GraphBfsExpander``: the graph walk step, the neighbours of a search's entity hits."""

from __future__ import annotations

from collections.abc import Sequence

from haystack import component

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.search_result import SearchResult
from agrag.components.retrievers.guarded_run import guarded_run
from agrag.components.stores.graph_store import GraphStore


@component
class GraphBfsExpander:
    """Walks the relations outward from the first entity hits of a result list and returns what it reaches.

    The seeds are the first ``seeds`` entities of the incoming (fused) results. The walk goes ``depth`` hops in
    both directions, keeps the ``per_hop`` best supported relations of each hop, and never expands an entity twice.
    The output holds the entities reached (never the seeds) and the relations walked, nearest hop first, then most
    supporting chunks first, at most ``limit`` of them, each with the method ``bfs``. A failure is reported in
    ``status`` and gives no results, so the search still returns what its methods found.

    Usage:
        ```python
        expander = GraphBfsExpander(store.graph, depth=2)
        out = expander.run(results=fused)
        neighbours = out["results"]
        ```
    """

    def __init__(
        self,
        graph: GraphStore,
        depth: int = 2,
        per_hop: int = 20,
        limit: int = 50,
        seeds: int = 5,
        *,
        method: str = "bfs",
    ) -> None:
        self.graph = graph
        self.depth = depth
        self.per_hop = per_hop
        self.limit = limit
        self.seeds = seeds
        self.method = method

    @component.output_types(results=list[SearchResult], status=MethodStatus)
    def run(
        self, results: list[SearchResult], relation_types: list[str] | None = None, depth: int | None = None
    ) -> dict[str, object]:
        """Walk the graph from the entity hits of ``results``.

        Args:
            results: The fused results; their first entities are the seeds.
            relation_types: Only cross relations of these types (None: all).
            depth: Hops of the walk (None: the expander's ``depth``).

        Returns:
            ``results``: the entities and relations reached, nearest first; ``status``: how the walk went.
        """
        seed_ids = list(dict.fromkeys(r.item.id for r in results if isinstance(r.item, Entity)))[: self.seeds]
        return guarded_run(self.method, lambda: self.walk(seed_ids, relation_types, depth=depth))

    def walk(
        self,
        seed_ids: Sequence[str],
        relation_types: Sequence[str] | None = None,
        *,
        direction: str = "both",
        depth: int | None = None,
        limit: int | None = None,
    ) -> list[SearchResult]:
        """Walk from ``seed_ids``: the relations and entities reached, nearest first; raises on a store failure."""
        limit = self.limit if limit is None else limit
        if not seed_ids or limit <= 0:
            return []
        steps = self.graph.traverse(
            seed_ids, relation_types, direction=direction, depth=depth or self.depth, per_hop=self.per_hop, limit=limit
        )
        seeds = set(seed_ids)
        ranked: list[tuple[tuple[int, int, int, str], Entity | Relation]] = []
        # An entity is reached at the first hop of a relation touching it; its support is that of those relations.
        reached: dict[str, tuple[int, int]] = {}
        for relation, hop in steps:
            support = len(relation.chunk_ids)
            ranked.append(((hop, -support, 1, relation.id), relation))
            for end in (relation.source_id, relation.target_id):
                if end in seeds:
                    continue
                first_hop, total = reached.get(end, (hop, 0))
                if hop == first_hop:
                    reached[end] = (hop, total + support)
        for entity in self.graph.get_entities(list(reached)):
            hop, support = reached[entity.id]
            ranked.append(((hop, -support, 0, entity.id), entity))
        ranked.sort(key=lambda pair: pair[0])
        return [
            SearchResult(item, 1.0 / (1 + rank), self.method, (self.method,))
            for rank, (_, item) in enumerate(ranked[:limit])
        ]
