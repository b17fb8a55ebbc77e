"""``SearchFilters``: what a recipe search may return, checked inside the store queries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from agrag.components.data_models.immutable import Immutable

PropertyValue = str | int | tuple[str, ...]


def _frozen(values: Mapping[str, PropertyValue | list[str]]) -> Mapping[str, PropertyValue]:
    return MappingProxyType({k: tuple(v) if isinstance(v, list | tuple) else v for k, v in values.items()})


@dataclass(frozen=True, slots=True)
class SearchFilters(Immutable):
    """Limits on the items a search returns.

    Attributes:
        labels: Entity labels a result must have (entity search only).
        relation_types: Relation types the graph walk may cross.
        document_ids: Only entities, chunks and communities from these source documents.
        properties: Exact-match filters on stored fields (a list or tuple means any of), for entity, chunk and
            community search: for example ``{"kind": "table"}`` for chunks or ``{"level": 0}`` for communities.

    Usage:
        ```python
        filters = SearchFilters(labels=("Person",), document_ids=("team.md",))
        results = await engine.search("Who wrote the Orion Planner?", HYBRID, filters)
        ```
    """

    labels: tuple[str, ...] = ()
    relation_types: tuple[str, ...] = ()
    document_ids: tuple[str, ...] = ()
    properties: Mapping[str, PropertyValue] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", tuple(self.labels))
        object.__setattr__(self, "relation_types", tuple(self.relation_types))
        object.__setattr__(self, "document_ids", tuple(self.document_ids))
        object.__setattr__(self, "properties", _frozen(self.properties))

    @property
    def empty(self) -> bool:
        """True when nothing is filtered."""
        return not (self.labels or self.relation_types or self.document_ids or self.properties)

    def __hash__(self) -> int:
        return hash((self.labels, self.relation_types, self.document_ids, tuple(sorted(self.properties.items()))))
