"""``PassageNames``: which entities of the passage graph some names name, and how many current chunks name each."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class PassageNames:
    """The part of the passage-entity graph a query's names need, read from the store without building the graph.

    Answers as ``PassageGraph`` does for the names it was read for: ``entities_named`` gives the resolved entities
    that current chunks name or are about, whose normalized name (or a merged member's) is the name, ids in
    ascending order; ``chunk_count`` how many current chunks name or are about each.
    """

    ids_by_name: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    chunk_counts: Mapping[str, int] = field(default_factory=dict)

    def entities_named(self, normalized_name: str) -> list[str]:
        """The graph's entities with this normalized name (only names this was read for are known)."""
        return list(self.ids_by_name.get(normalized_name, ()))

    def chunk_count(self, entity_id: str) -> int:
        """How many current chunks name or are about ``entity_id`` (0 if none, or not read)."""
        return self.chunk_counts.get(entity_id, 0)
