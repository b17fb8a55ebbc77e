"""``agrag.common.data_models.search_result``: re-exports ``agrag.components.data_models.search_result``."""

from agrag.components.data_models.search_result import SearchItem, SearchResult

__all__ = ["SearchItem", "SearchResult"]
