"""``agrag.common.data_models.search_filters``: re-exports ``agrag.components.data_models.search_filters``."""

from agrag.components.data_models.search_filters import SearchFilters

__all__ = ["SearchFilters"]
