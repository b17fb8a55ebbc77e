"""``LimitCutter``: keeps the top results of a ranked list."""

from __future__ import annotations

from haystack import component

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.search_result import SearchResult


@component
class LimitCutter:
    """The last step of every recipe: keep the first ``limit`` results.

    Usage:
        ```python
        top = LimitCutter(limit=10).run(results=fused)["results"]
        ```
    """

    def __init__(self, limit: int = defaults.RECIPE_LIMIT) -> None:
        if limit < 1:
            raise ComponentConfigError(
                "LimitCutter", f"limit must be at least 1, got {limit}", "Set the recipe's limit to 1 or more."
            )
        self.limit = limit

    @component.output_types(results=list[SearchResult])
    def run(self, results: list[SearchResult]) -> dict[str, list[SearchResult]]:
        """Return the first ``limit`` results."""
        return {"results": results[: self.limit]}
