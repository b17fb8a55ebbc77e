"""The error of an LLM's query analysis that is not the JSON asked for (the rules answer instead)."""

from __future__ import annotations

from agrag.components.errors import LLMError


class QueryAnalysisError(LLMError):
    """The LLM answered the query-analysis prompt with JSON that lacks a field or has one of the wrong kind.

    The analyser never raises it to a user: it is recorded on the analysis (``QueryAnalysis.error``) and the rules
    answer instead.

    Usage:
        ```python
        raise QueryAnalysisError("entities_from_query", "a list of strings", 42)
        ```
    """

    def __init__(self, field: str, expected: str, got: object) -> None:
        self.field = field
        self.expected = expected
        shown = repr(got)
        super().__init__(
            f"The LLM's query analysis has no {expected} under {field!r} (got {shown[:120]}). Use a model that "
            "follows JSON instructions, or set RETRIEVAL_QUERY_ANALYZER=rules to analyse queries without it."
        )
