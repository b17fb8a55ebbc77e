"""``SearchTrace``: what happened inside one recipe search."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.immutable import Immutable
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.query_analysis import QueryAnalysis


@dataclass(frozen=True, slots=True)
class SearchTrace(Immutable):
    """Per-method outcome and timings of one search.

    Attributes:
        query: The query text.
        recipe: The recipe's name.
        methods: One status per method, in recipe order.
        fused: How many distinct items fusion received from all methods together.
        steps: One status per step that ran after fusion (bfs, community_expand, rerank), in order.
        returned: How many results the cut kept.
        elapsed_ms: Wall time of the whole search.
        analysis: The query's answer type, names and relations (None where no search ran); not used in ranking yet.
    """

    query: str
    recipe: str
    methods: tuple[MethodStatus, ...]
    fused: int
    returned: int
    elapsed_ms: float
    steps: tuple[MethodStatus, ...] = ()
    analysis: QueryAnalysis | None = None

    @property
    def failures(self) -> dict[str, str]:
        """Method name to error, for the methods that failed."""
        return {s.method: s.error for s in self.methods if not s.ok}
