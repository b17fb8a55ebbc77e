"""``repair_vectors``: embed the vector collections again from the graph, for ``agrag repair``.

The graph is the record of a data dir: every chunk's text and place, every entity, every community report, every
relation and the passages that state it. The vector collections are derived from it at ingestion, so a lost or
emptied collection can be rebuilt from it without the source files or an LLM: this module embeds the same texts
ingestion embeds and writes the points with the same payloads (a superseded chunk stays marked superseded, a merged
entity merged). A damaged graph cannot be rebuilt this way; ``KuzuOpenCheck`` refuses it before anything opens.

The facts collection is also how a data dir made before facts were searchable gets them: it opens with the
collection empty, ``agrag status`` says how many facts are not searchable, and a repair embeds them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.disk_space import BYTES_PER_POINT
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_payloads import CHUNK_IDS
from agrag.components.stores.vector_store import VectorCollection, VectorStore
from agrag.flows.fact_points import stored_vectors, vector_of
from agrag.flows.vector_contents import CollectionContents, collection_contents
from agrag.pipelines.store_factory import VectorDamage, vector_damage

Progress = Callable[[str, int], None]
REPAIR_KEPT = "No vector was written, and the graph is unchanged."


@dataclass(frozen=True, slots=True)
class RepairPlan:
    """What ``repair_vectors`` will do: the damage found, the contents of each collection to rebuild, the disk room.

    ``room`` is what the points written take (``BYTES_PER_POINT`` each); the repair needs it free above
    ``AGRAG_MIN_FREE_MB`` (``KnowledgeStore.require_room``).
    """

    damage: tuple[VectorDamage, ...]
    contents: tuple[CollectionContents, ...]

    @property
    def points(self) -> dict[str, int]:
        """Points to write per collection."""
        return {c.collection.value: len(c.ids) for c in self.contents}

    @property
    def room(self) -> int:
        """Bytes of disk the points to write take."""
        return BYTES_PER_POINT * sum(self.points.values())

    @property
    def doing(self) -> str:
        """What the repair does, as the disk check's message says it."""
        return "embed again " + ", ".join(f"{n} {name} vectors" for name, n in self.points.items())


def fact_damage(store: KnowledgeStore) -> list[VectorDamage]:
    """What the facts collection lacks: fewer points than relations a current passage states (an old data dir: all)."""
    held, stated = store.facts.count(), len(store.graph.supported_facts())
    if held >= stated:
        return []
    reason = f"the facts vectors hold {held} points, but the graph has {stated} relations a current passage states" + (
        " (a data dir made before facts were searchable)" if held == 0 else ""
    )
    return [VectorDamage(VectorCollection.FACTS, reason)]


def plan_repair(store: KnowledgeStore, *, everything: bool = False) -> RepairPlan:
    """Find the damaged collections (all four with ``everything``) and what rebuilding them writes; writes nothing."""
    checked = vector_damage(store.graph, (store.chunks, store.entities, store.communities))
    damage = tuple([*checked, *fact_damage(store)])
    todo = [c for c in VectorCollection if everything or any(d.collection is c for d in damage)]
    return RepairPlan(damage, tuple(collection_contents(store.graph, c) for c in sorted(todo, key=lambda c: c.value)))


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


def _derive_facts(store: KnowledgeStore, contents: CollectionContents, tell: Progress) -> int:
    """Write each slice of the facts' points with vectors made from the stored chunk and entity vectors.

    As ingestion makes them (``fact_points``): no model runs. Runs after the chunks and entities were repaired.
    """
    written = 0
    for part in contents.slices():
        items = contents.read(part)
        passages = stored_vectors(store.chunks, [c for i in items for c in i.payload[CHUNK_IDS]])
        ends = stored_vectors(store.entities, [i.payload[end] for i in items for end in ("source_id", "target_id")])
        points = []
        for item in items:
            payload = item.payload
            vector = vector_of(payload[CHUNK_IDS], payload["source_id"], payload["target_id"], passages, ends)
            if vector is not None:
                points.append(item.with_vector(vector))
        with store.writing():
            store.facts.upsert(points)
        written += len(points)
        tell(VectorCollection.FACTS.value, written)
    return written


def repair_vectors(
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    *,
    everything: bool = False,
    progress: Progress | None = None,
    plan: RepairPlan | None = None,
) -> VectorRepair:
    """Embed again, from the graph, the collections that lack points (all four with ``everything``).

    Every point of a repaired collection is written again (an upsert by id, so points already there are replaced
    by the same), under ``store.writing()`` one slice at a time. Nothing is written when nothing is damaged and
    ``everything`` is False, nor when the disk lacks the plan's room.

    Args:
        store: The open stores (opened with ``check_vectors=False``).
        embedder: The data dir's embedding model.
        everything: Rebuild every collection, damaged or not.
        progress: Told ``(collection, points written so far)`` after each slice.
        plan: What ``plan_repair`` found (made here when None).

    Raises:
        NoSpaceLeftError: the disk lacks ``plan.room`` above ``AGRAG_MIN_FREE_MB``; checked before any write.
    """
    plan = plan or plan_repair(store, everything=everything)
    if plan.contents:
        store.require_room(plan.room, plan.doing, REPAIR_KEPT)
    tell = progress or (lambda _collection, _written: None)
    # in collection order: chunks and entities (when damaged too) come back before the facts made from them
    written = {
        contents.collection.value: (
            _derive_facts(store, contents, tell)
            if contents.collection is VectorCollection.FACTS
            else _embed_into(store, embedder, store.vectors(contents.collection), contents, tell)
        )
        for contents in plan.contents
    }
    return VectorRepair(plan.damage, written)
