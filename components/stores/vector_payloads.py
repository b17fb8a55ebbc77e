"""The payload stored with each vector point, written by ingestion and read back by the retrievers.

One module owns the format both ways, so a field added on one side cannot be forgotten on the other.
"""

from __future__ import annotations

from typing import Any

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.stores.vector_store import CURRENT, STATUS_FIELD, VectorHit


def chunk_payload(chunk: Chunk) -> dict[str, Any]:
    """The payload of a chunk's point; a new chunk is the current version."""
    return {
        "document_id": chunk.document_id,
        "document_version": chunk.document_version,
        "title": chunk.title,
        "text": chunk.text,
        "heading_path": list(chunk.heading_path),
        "order": chunk.order,
        "start": chunk.start,
        "end": chunk.end,
        "parent_id": chunk.parent_id or "",
        STATUS_FIELD: CURRENT,
    }


def chunk_from_payload(hit: VectorHit) -> Chunk:
    """Rebuild a ``Chunk`` from its point."""
    p = hit.payload
    return Chunk(
        id=hit.id,
        document_id=p["document_id"],
        document_version=p["document_version"],
        text=p["text"],
        heading_path=tuple(p["heading_path"]),
        order=int(p["order"]),
        start=int(p["start"]),
        end=int(p["end"]),
        parent_id=p.get("parent_id") or None,
        title=p.get("title", ""),
    )


def entity_payload(entity: Entity) -> dict[str, Any]:
    """The payload of an entity's point."""
    return {"name": entity.name, "label": entity.label, "description": entity.description}


def entity_from_payload(hit: VectorHit) -> Entity:
    """Rebuild an ``Entity`` from its point."""
    p = hit.payload
    return Entity(id=hit.id, name=p["name"], label=p.get("label", ""), description=p.get("description", ""))
