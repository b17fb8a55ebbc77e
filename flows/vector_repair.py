"""``repair_vectors``: embed the vector collections again from the graph, for ``agrag repair``.

The graph is the record of a data dir: every chunk's text and place, every entity, every community report. The
vector collections are derived from it at ingestion, so a lost or emptied collection can be rebuilt from it
without the source files or an LLM: this module embeds the same texts ingestion embeds and writes the points with
the same payloads (a superseded chunk stays marked superseded, a merged entity merged). A damaged graph cannot be
rebuilt this way; ``KuzuOpenCheck`` refuses it before anything opens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.embedders.embedding_texts import (
    chunk_embedding_text,
    community_report_text,
    entity_embedding_text,
)
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_payloads import (
    chunk_payload,
    community_payload,
    entity_payload,
)
from agrag.components.stores.vector_store import STATUS_FIELD, SUPERSEDED, VectorCollection, VectorPoint, VectorStore
from agrag.pipelines.store_factory import VectorDamage, vector_damage

# Chunks read from the graph and embedded at a time, so memory stays flat on a large graph.
REPAIR_SLICE = 512
T = TypeVar("T")
Progress = Callable[[str, int], None]


@dataclass(frozen=True, slots=True)
class VectorRepair:
    """What ``repair_vectors`` did: the damage it found, and the points written per collection."""

    damage: tuple[VectorDamage, ...]
    written: dict[str, int]


def _chunk_point(chunk: Chunk, vector: Sequence[float], text: str) -> VectorPoint:
    payload = chunk_payload(chunk)
    if not chunk.current:
        payload[STATUS_FIELD] = SUPERSEDED
    return VectorPoint(chunk.id, vector, text, payload)


def _entity_point(item: tuple[Entity, bool], vector: Sequence[float], text: str) -> VectorPoint:
    entity, merged = item
    return VectorPoint(entity.id, vector, text, entity_payload(entity, merged=merged))


def _write_slices(
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    target: VectorStore,
    slices: Iterable[Sequence[T]],
    *,
    text_of: Callable[[T], str],
    point_of: Callable[[T, Sequence[float], str], VectorPoint],
    tell: Progress,
) -> int:
    """Embed each slice and upsert its points into ``target``, one slice under ``store.writing()`` at a time."""
    written = 0
    for part in slices:
        texts = [text_of(item) for item in part]
        points = [point_of(i, v, t) for i, v, t in zip(part, embedder.embed_batch(texts), texts, strict=True)]
        with store.writing():
            target.upsert(points)
        written += len(points)
        tell(target.collection.value, written)
    return written


def repair_vectors(
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    *,
    everything: bool = False,
    progress: Progress | None = None,
) -> VectorRepair:
    """Embed again, from the graph, the collections that lack points (all three with ``everything``).

    Every point of a repaired collection is written again (an upsert by id, so points already there are replaced
    by the same), under ``store.writing()`` one slice at a time. Nothing is written when nothing is damaged and
    ``everything`` is False.

    Args:
        store: The open stores (opened with ``check_vectors=False``).
        embedder: The data dir's embedding model.
        everything: Rebuild every collection, damaged or not.
        progress: Told ``(collection, points written so far)`` after each slice.
    """
    damage = tuple(vector_damage(store.graph, (store.chunks, store.entities, store.communities)))
    todo = {c for c in VectorCollection if everything or any(d.collection is c for d in damage)}
    written = {c.value: 0 for c in sorted(todo, key=lambda c: c.value)}
    tell = progress or (lambda _collection, _written: None)
    if VectorCollection.CHUNKS in todo:
        ids = store.graph.searchable_chunk_ids()
        written["chunks"] = _write_slices(
            store,
            embedder,
            store.chunks,
            (store.graph.get_chunks(ids[i : i + REPAIR_SLICE]) for i in range(0, len(ids), REPAIR_SLICE)),
            text_of=chunk_embedding_text,
            point_of=_chunk_point,
            tell=tell,
        )
    if VectorCollection.ENTITIES in todo:
        entities = store.graph.all_entities()
        written["entities"] = _write_slices(
            store,
            embedder,
            store.entities,
            (entities[i : i + REPAIR_SLICE] for i in range(0, len(entities), REPAIR_SLICE)),
            text_of=lambda item: entity_embedding_text(item[0]),
            point_of=_entity_point,
            tell=tell,
        )
    if VectorCollection.COMMUNITIES in todo:
        communities = store.graph.communities()
        texts = [community_report_text(c) for c in communities]
        vectors = embedder.embed_batch(texts) if communities else []
        with store.writing():
            store.communities.upsert(
                [
                    VectorPoint(c.id, v, t, community_payload(c))
                    for c, v, t in zip(communities, vectors, texts, strict=True)
                ]
            )
        written["communities"] = len(communities)
        tell("communities", written["communities"])
    return VectorRepair(damage, written)
