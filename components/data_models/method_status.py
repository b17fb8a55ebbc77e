"""``MethodStatus``: how one search method went, for the trace."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.immutable import Immutable


@dataclass(frozen=True, slots=True)
class MethodStatus(Immutable):
    """Outcome of one method in one search.

    Attributes:
        method: The method name.
        ok: False if the method failed; its results are then empty and ``error`` says why.
        count: Number of results it returned.
        elapsed_ms: Wall time of the method.
        error: ``Type: message`` of the failure, if any.
    """

    method: str
    ok: bool
    count: int
    elapsed_ms: float
    error: str = ""
