"""``Relation``: an edge between two entities, with the chunks that support it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from agrag.components.data_models.immutable import Immutable


def relation_id_for(source_id: str, target_id: str, relation_type: str) -> str:
    """Return the id of the relation of this type between these two entities."""
    key = f"{source_id}|{relation_type}|{target_id}"
    return "r" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:15]


@dataclass(frozen=True, slots=True)
class Relation(Immutable):
    """A typed edge between two entities.

    Attributes:
        id: Derived from source, type and target.
        source_id: Entity id of the source.
        target_id: Entity id of the target.
        type: Relation type (``RELATED_TO`` for co-occurrence).
        chunk_ids: Chunks whose text supports the relation.
        description: A sentence that states it, if the extractor kept one.
    """

    id: str
    source_id: str
    target_id: str
    type: str
    chunk_ids: tuple[str, ...]
    description: str = ""
