"""The payload stored with each vector point, written by ingestion and read back by the retrievers.

One module owns the format both ways, so a field added on one side cannot be forgotten on the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agrag.components.data_models.chunk import Chunk, ChunkKind, document_id_of
from agrag.components.data_models.community import Community, CommunityReport, ReportMethod
from agrag.components.data_models.document_structure import TableCell
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.fact import Fact
from agrag.components.stores.vector_store import CURRENT, MERGED_STATUS, STATUS_FIELD, StoredPoint, VectorHit

STORE = "vector store"


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
        "kind": chunk.kind,
        "cells": [[c.row, c.column, c.start, c.end] for c in chunk.cells],
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
        kind=ChunkKind.from_stored(p.get("kind") or ChunkKind.TEXT, STORE),
        cells=tuple(TableCell(*cell) for cell in p.get("cells", ())),
    )


def entity_payload(entity: Entity, merged: bool = False) -> dict[str, Any]:
    """The payload of an entity's point; a merged entity's point stays stored (for an undo) but is not searched."""
    return {
        "name": entity.name,
        "label": entity.label,
        "description": entity.description,
        STATUS_FIELD: MERGED_STATUS if merged else CURRENT,
    }


def entity_from_payload(hit: VectorHit) -> Entity:
    """Rebuild an ``Entity`` from its point."""
    p = hit.payload
    return Entity(id=hit.id, name=p["name"], label=p.get("label", ""), description=p.get("description", ""))


def community_payload(community: Community) -> dict[str, Any]:
    """The payload of a community report's point."""
    report = community.report
    return {
        "level": community.level,
        "parent_id": community.parent_id or "",
        "entity_ids": list(community.entity_ids),
        "title": report.title if report else "",
        "summary": report.summary if report else "",
        "rating": report.rating if report else 0.0,
        "method": report.method if report else "",
    }


def community_from_payload(hit: VectorHit) -> Community:
    """Rebuild a ``Community`` and its report (without findings, which the graph store keeps) from its point."""
    p = hit.payload
    report = None
    if p.get("title") or p.get("summary"):
        # a report stored without a method (none is written so) reads as the default, extractive
        method = ReportMethod.from_stored(p.get("method") or ReportMethod.EXTRACTIVE, STORE)
        report = CommunityReport(p.get("title", ""), p.get("summary", ""), float(p.get("rating", 0.0)), (), method)
    return Community(
        id=hit.id,
        level=int(p.get("level", 0)),
        entity_ids=tuple(p.get("entity_ids", ())),
        parent_id=p.get("parent_id") or None,
        report=report,
    )


# The fact payload's fields of its passages: what a retirement finds it by, and what a document scope filters on.
CHUNK_IDS = "chunk_ids"
DOCUMENT_IDS = "document_ids"


def fact_support(chunk_ids: Sequence[str]) -> dict[str, Any]:
    """The payload fields of a fact's supporting passages: their ids, and their documents (which scopes filter on)."""
    ids = sorted(set(chunk_ids))
    return {CHUNK_IDS: ids, DOCUMENT_IDS: sorted({document_id_of(i) for i in ids})}


def fact_payload(fact: Fact, status: str = CURRENT) -> dict[str, Any]:
    """The payload of a fact's point: its ends, predicate and sentence, the passages that state it, its status."""
    return {
        "source_id": fact.source_id,
        "source": fact.source,
        "type": fact.type,
        "target_id": fact.target_id,
        "target": fact.target,
        "description": fact.description,
        **fact_support(fact.chunk_ids),
        STATUS_FIELD: status,
    }


def fact_from_payload(hit: VectorHit | StoredPoint) -> Fact:
    """Rebuild a ``Fact`` (without its passages' text) from its point."""
    p = hit.payload
    return Fact(
        id=hit.id,
        source_id=p["source_id"],
        source=p.get("source", ""),
        type=p.get("type", ""),
        target_id=p["target_id"],
        target=p.get("target", ""),
        description=p.get("description", ""),
        chunk_ids=tuple(p.get(CHUNK_IDS, ())),
    )
