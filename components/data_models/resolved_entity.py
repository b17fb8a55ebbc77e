"""``ResolvedEntity``: an entity that entity resolution formed from several extracted entities, and what it absorbed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.immutable import Immutable
from agrag.components.data_models.resolution import ResolutionRule


@dataclass(frozen=True, slots=True)
class MergedEntity(Immutable):
    """One extracted entity that resolution merged into a resolved entity, and why.

    The record stays stored with its own mentions and relations (an undo only clears its pointer), so its id keeps
    naming it in the merge log (``agrag merges list``) and in ``agrag merges undo ID``.

    Attributes:
        id: The id of the merged entity record.
        name: Its name as extracted (``CAN``, ``J. Smith``).
        label: Its label as extracted.
        rule: The resolution rule that merged it (``acronym``, ``fuzzy``, ``embedding``, ...); None when the
            merge log has no active line for it.
        score: That rule's score (a rapidfuzz ratio 0-100, a cosine, 1.0 for the LLM's yes); 0.0 without a rule.
        reason: The merge in words, as the merge log gives it (``'CAN' is the acronym of ...``).
    """

    id: str
    name: str
    label: str
    rule: ResolutionRule | None = None
    score: float = 0.0
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ResolvedEntity(Entity):
    """An entity that absorbed others: ``Controller Area Network`` with ``CAN`` merged into it.

    It is an ``Entity`` in every way a search uses one (same id, name, label, description; ranked, fused and
    deduplicated as the ``Entity`` of that id, so its ``item_key`` is ``("Entity", id)``), and it also says what it
    was formed from, so a reader sees why ``J. Smith`` and ``John Smith`` are one item.

    Attributes:
        merged_from: The extracted entities merged into it, by name then id (itself not included).

    Usage:
        ```python
        for result in results:
            if isinstance(result.item, ResolvedEntity):
                print(result.item.name, "also known as", ", ".join(result.item.aliases))
        ```
    """

    merged_from: tuple[MergedEntity, ...] = ()

    @classmethod
    def of(cls, entity: Entity, merged_from: Sequence[MergedEntity]) -> ResolvedEntity:
        """``entity`` with the entities merged into it (sorted by name, then id)."""
        members = tuple(sorted(merged_from, key=lambda m: (m.name, m.id)))
        return cls(entity.id, entity.name, entity.label, entity.description, members)

    @property
    def aliases(self) -> tuple[str, ...]:
        """The other names it is known by: the merged entities' names that differ from its own, once each."""
        return tuple(dict.fromkeys(m.name for m in self.merged_from if m.name != self.name))

    @property
    def merged_ids(self) -> tuple[str, ...]:
        """The ids of the merged entity records."""
        return tuple(m.id for m in self.merged_from)


def with_merged(entity: Entity, merged_from: Sequence[MergedEntity]) -> Entity:
    """``entity`` as a ``ResolvedEntity`` when something was merged into it, else ``entity`` itself."""
    return ResolvedEntity.of(entity, merged_from) if merged_from else entity
