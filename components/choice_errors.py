"""Errors for a value outside a closed set of names (an enum): they list the valid values and say how to fix it."""

from __future__ import annotations

from collections.abc import Iterable

from agrag.components.errors import AgragError, RetrievalError


class UnknownChoiceError(AgragError, ValueError):
    """A value is not one of the names a closed set allows (a ``ValueError`` too, so pydantic reports it).

    Usage:
        ```python
        raise UnknownChoiceError("report method", "abstractive", ["extractive", "llm"])
        ```
    """

    def __init__(self, what: str, value: str, valid: Iterable[str]) -> None:
        self.what = what
        self.value = value
        self.valid = list(valid)
        super().__init__(f"Unknown {what} {value!r}. Use one of: {', '.join(self.valid)}.")


class UnknownTraversalDirectionError(UnknownChoiceError, RetrievalError):
    """A graph walk was asked for a direction other than ``both``, ``out`` or ``in``."""
