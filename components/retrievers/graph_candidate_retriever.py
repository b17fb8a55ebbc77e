"""``GraphCandidateRetriever``: the near misses that entity resolution kept out of the graph, by name."""

from __future__ import annotations

from dataclasses import replace

from haystack import component
from rapidfuzz import fuzz

from agrag.components.data_models.entity import normalize_name
from agrag.components.data_models.resolution import ResolutionCandidate
from agrag.components.stores.graph_store import GraphStore


@component
class GraphCandidateRetriever:
    """Finds resolution candidates (pairs of look-alike names) whose names match the query's words.

    Candidates carry no document scope: a caller restricted to some documents must not expose this search.

    Usage:
        ```python
        candidates = GraphCandidateRetriever(store.graph).run(query="Atlas controller")["candidates"]
        ```
    """

    def __init__(self, graph: GraphStore, limit: int = 10, min_score: float = 60.0) -> None:
        """Search ``graph``'s candidates; a name must match the query at ``min_score`` (0-100) or better."""
        self.graph = graph
        self.limit = limit
        self.min_score = min_score

    @component.output_types(candidates=list[ResolutionCandidate])
    def run(self, query: str, limit: int | None = None) -> dict[str, list[ResolutionCandidate]]:
        """The candidates whose either name best matches ``query``; ``score`` becomes that match (0-100)."""
        wanted = normalize_name(query)
        scored = []
        for candidate in self.graph.candidates():
            match = max(
                fuzz.token_set_ratio(wanted, normalize_name(candidate.name)),
                fuzz.token_set_ratio(wanted, normalize_name(candidate.other_name)),
            )
            if match >= self.min_score:
                scored.append(replace(candidate, score=float(match)))
        scored.sort(key=lambda c: (-c.score, c.name, c.other_name))
        return {"candidates": scored[: limit or self.limit]}
