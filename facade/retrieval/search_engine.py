"""``agrag.retrieval.search_engine``: ``SearchEngine`` and what its calls take and return."""

from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.errors import AllRetrievalMethodsFailedError, UnknownRecipeMethodError
from agrag.pipelines.search_engine import SearchEngine, SearchResponse

__all__ = [
    "AllRetrievalMethodsFailedError",
    "SearchEngine",
    "SearchFilters",
    "SearchResponse",
    "SearchResult",
    "UnknownRecipeMethodError",
]
