"""``TraversalDirection``: which way a graph walk follows relations."""

from __future__ import annotations

from agrag.components.choice_errors import UnknownChoiceError, UnknownTraversalDirectionError
from agrag.components.data_models.closed_set import ClosedSet


class TraversalDirection(ClosedSet, what="traversal direction"):
    """``out`` follows relations from source to target, ``in`` from target to source, ``both`` either way."""

    BOTH = "both"
    OUT = "out"
    IN = "in"

    @classmethod
    def unknown(cls, value: str) -> UnknownChoiceError:
        """A ``RetrievalError`` too: a walk in an unknown direction is a search that cannot run."""
        return UnknownTraversalDirectionError(cls.what(), value, [member.value for member in cls])
