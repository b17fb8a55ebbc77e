"""``MethodOutput``: what a search method or step component returns, typed so callers need no casts."""

from __future__ import annotations

from typing import TypedDict

from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.search_result import SearchResult


class MethodOutput(TypedDict):
    """The output of a retriever or a search step: its results and how it went.

    Attributes:
        results: The results, best first (empty when the method failed).
        status: How the method went; ``ok`` is False and ``error`` says why when it failed.
    """

    results: list[SearchResult]
    status: MethodStatus


class WalkOutput(MethodOutput):
    """The output of the graph walk: what it reached (``results``), the passages that state it, and its status."""

    passages: list[SearchResult]


class RerankOutput(MethodOutput):
    """The output of a re-ranker that scores with a model: the results, how many it scored, and its status."""

    scored: int
