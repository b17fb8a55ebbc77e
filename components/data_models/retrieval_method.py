"""The names of a search's parts: the methods a recipe runs, its re-rankers, and the steps after fusion."""

from __future__ import annotations

from agrag.components.data_models.closed_set import ClosedSet
from agrag.components.errors import UnknownRecipeMethodError


class RetrievalMethod(ClosedSet):
    """The search methods a recipe can run."""

    ENTITY = "entity"
    CHUNK = "chunk"
    COMMUNITY = "community"
    TEXT2CYPHER = "text2cypher"
    PPR = "ppr"
    FACT = "fact"

    @classmethod
    def from_str(cls, value: str, recipe: str | None = None) -> RetrievalMethod:
        """Parse a method name; an unknown name raises ``UnknownRecipeMethodError`` listing the valid ones."""
        try:
            return cls(value)
        except ValueError:
            raise UnknownRecipeMethodError(str(value), [m.value for m in cls], recipe) from None


class Reranker(ClosedSet, what="reranker"):
    """How a recipe re-orders the fused candidates."""

    CROSS_ENCODER = "cross_encoder"
    NODE_DISTANCE = "node_distance"


class SearchStep(ClosedSet, what="search step"):
    """The steps of a search that are not methods, as ``SearchResult.method`` and the trace name them."""

    BFS = "bfs"
    COMMUNITY_EXPAND = "community_expand"
    RERANK = "rerank"
    TRAVERSE = "traverse"  # the walk of ``SearchEngine.traverse`` (the explore tools), outside any recipe
