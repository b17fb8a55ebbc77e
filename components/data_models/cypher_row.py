"""``CypherRow``: one row a text2cypher graph query returned, as a search item."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from agrag.components.data_models.immutable import Immutable


@dataclass(frozen=True, slots=True)
class CypherRow(Immutable):
    """A row of values computed by a read-only graph query that a model wrote from the question.

    Attributes:
        id: A hash of the query and the row, so fusion can tell rows apart.
        query: The Cypher query that produced the row (after any repair).
        columns: The column names.
        values: The row's values, JSON-compatible, one per column.
    """

    id: str
    query: str
    columns: tuple[str, ...]
    values: tuple[Any, ...]

    @classmethod
    def of(cls, query: str, columns: tuple[str, ...], values: tuple[Any, ...]) -> CypherRow:
        """A row with its id derived from the query and the values."""
        digest = hashlib.sha256(json.dumps([query, list(values)], default=str).encode("utf-8")).hexdigest()[:16]
        return cls(f"row-{digest}", query, columns, values)
