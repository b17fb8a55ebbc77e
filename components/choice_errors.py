"""Errors for a value outside a closed set of names (an enum): they list the valid values and say how to fix it."""

from __future__ import annotations

from collections.abc import Iterable

from agrag.components.errors import AgragError, RetrievalError, StoreError


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


class UnknownStoredValueError(StoreError):
    """A store holds a value outside a closed set: the data dir was written by another agrag version, or damaged.

    Usage:
        ```python
        raise UnknownStoredValueError("graph store", "resolution rule", "phonetic", ["fuzzy", "llm"])
        ```
    """

    def __init__(self, store: str, what: str, value: str, valid: Iterable[str]) -> None:
        self.what = what
        self.value = value
        self.valid = list(valid)
        super().__init__(
            f"The {store} holds an unknown {what} {value!r} (this agrag knows {', '.join(self.valid)}): the data "
            "dir was written by another agrag version or is damaged. Open it with the version that wrote it, or "
            "ingest the documents again into a new data dir."
        )
