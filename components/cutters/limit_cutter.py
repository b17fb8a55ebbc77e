"""``LimitCutter``: keeps the top results of a ranked list."""

from __future__ import annotations

from haystack import component

from agrag.components.data_models.search_result import SearchResult


@component
class LimitCutter:
    """The last step of every recipe: keep the first ``limit`` results.

    Usage:
        ```python
        top = LimitCutter(limit=10).run(results=fused)["results"]
        ```
    """

    def __init__(self, limit: int = 10) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}.")
        self.limit = limit

    @component.output_types(results=list[SearchResult])
    def run(self, results: list[SearchResult]) -> dict[str, list[SearchResult]]:
        """Return the first ``limit`` results."""
        return {"results": results[: self.limit]}
