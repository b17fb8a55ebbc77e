"""``repair_vectors``: embed the vector collections again from the graph, for ``agrag repair``.

The graph is the record of a data dir: every chunk's text and place, every entity, every community report. The
vector collections are derived from it at ingestion, so a lost or emptied collection can be rebuilt from it
without the source files or an LLM: this module embeds the same texts ingestion embeds and writes the points with
the same payloads (a superseded chunk stays marked superseded, a merged entity merged). A damaged graph cannot be
rebuilt this way; ``KuzuOpenCheck`` refuses it before anything opens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_store import VectorCollection, VectorStore
from agrag.flows.vector_contents import CollectionContents, collection_contents
from agrag.pipelines.store_factory import VectorDamage, vector_damage

Progress = Callable[[str, int], None]


@dataclass(frozen=True, slots=True)
class VectorRepair:
    """What ``repair_vectors`` did: the damage it found, and the points written per collection."""

    damage: tuple[VectorDamage, ...]
    written: dict[str, int]


def _embed_into(
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    target: VectorStore,
    contents: CollectionContents,
    tell: Progress,
) -> int:
    """Embed each slice of ``contents`` and upsert its points into ``target``, one slice under ``store.writing()``."""
    written = 0
    for part in contents.slices():
        items = contents.read(part)
        vectors = embedder.embed_batch([item.text for item in items])
        with store.writing():
            target.upsert([item.with_vector(v) for item, v in zip(items, vectors, strict=True)])
        written += len(items)
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
    tell = progress or (lambda _collection, _written: None)
    written = {
        c.value: _embed_into(store, embedder, store.vectors(c), collection_contents(store.graph, c), tell)
        for c in sorted(todo, key=lambda c: c.value)
    }
    return VectorRepair(damage, written)
