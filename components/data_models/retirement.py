"""``Retirement``: what taking superseded or deleted chunks out of the current graph changed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Retirement:
    """Entities the retired chunks named or were about, and those of them deleted for want of other support.

    Attributes:
        touched: Every entity the chunks named or were about; the survivors' communities need fresh reports.
        removed: The entities no current chunk supports any more, now out of the graph.
    """

    touched: tuple[str, ...]
    removed: tuple[str, ...]
