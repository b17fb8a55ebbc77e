"""The write of a re-extracted document: its chunks' links replaced in one idempotent commit.

The commit (``KnowledgeStore.committing()``) keeps the entity vectors it adds or changes pending (found by no
search) until its last graph statement has run. The chunks are not touched, so no reader ever sees a chunk of an
uncommitted version; a write killed half-way leaves the document's links half replaced until it runs again. Its
order makes a write failed at any statement, and started again, end as one uninterrupted write:

1. the entities the chunks linked to before are read once and journaled (a resumed write must not read them from a
   half-replaced graph);
2. the new entities are stored (a stored entity keeps its record, so a merge pointer on it stays) with vectors for
   the ones that have none yet;
3. the chunks' old mentions, about links and relation support are removed, and the new ones written, with the
   points of the new facts (the facts the chunks stated before are settled from the graph after the commit);
4. the resolution decisions are applied (the merge log id is journaled, so its lines are written once);
5. entities no current chunk names any more are removed, with their vectors, and the communities around every
   entity touched are marked stale;
6. the document's settings hash is recorded: the commit.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.phase_key import PhaseKey
from agrag.components.data_models.resolution import MERGED, Resolution
from agrag.components.embedders.embedding_texts import entity_embedding_text
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_payloads import entity_payload
from agrag.components.stores.vector_store import MERGED_STATUS, VectorCollection, VectorPoint
from agrag.flows.community_tasks import mark_communities_stale
from agrag.flows.fact_points import extraction_facts, fact_points, stored_vectors
from agrag.pipelines.ingest_components import PhaseHashes

BEFORE = "reextract-before"
RUN_ID = "reextract-run-id"


@dataclass(frozen=True, slots=True)
class LinksReplaced:
    """What replacing one document's links did: entities embedded for the first time, entities removed, facts."""

    entities_new: int
    removed: tuple[str, ...]
    facts: int = 0


def replace_links(
    store: KnowledgeStore,
    *,
    document_id: str,
    subject: str,
    chunk_ids: Sequence[str],
    resolution: Resolution,
    embedder: SentenceTransformersTextEmbedder,
    hashes: PhaseHashes,
) -> LinksReplaced:
    """Replace what ``chunk_ids`` (one document's current chunks) link to with ``resolution``'s extraction.

    Only entities without a vector are embedded, outside the write lock, and each fact of the new extraction gets a
    vector made from its chunk's and its ends'; the write is one commit (``store.committing()``).
    """
    journal = store.journal
    assert journal is not None  # checked when the documents were selected
    extraction = resolution.extraction
    merged = {d.member_id: d.resolved_id for d in resolution.decisions if d.decision == MERGED}
    points = _new_points(store, list(extraction.entities), set(merged), embedder)
    stated = extraction_facts(extraction, store.graph)
    passages = stored_vectors(store.chunks, [c for f in stated for c in f.chunk_ids])
    ends = stored_vectors(store.entities, [e for f in stated for e in (f.source_id, f.target_id)], points)
    facts = fact_points(stated, passages, ends)
    before_key = PhaseKey(subject, BEFORE, hashes.resolve)
    run_key = PhaseKey(subject, RUN_ID, hashes.resolve)
    graph = store.graph
    with store.committing() as pending:
        before: frozenset[str] | None = journal.load(before_key)
        if before is None:
            records = graph.entities_of_chunks(chunk_ids)
            before = frozenset(records | set(graph.resolved_ids(sorted(records)).values()))
            journal.save(before_key, before)
        run_id: str | None = journal.load(run_key)
        if run_id is None:
            run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
            journal.save(run_key, run_id)
        graph.upsert_entities(extraction.entities)
        pending.add(VectorCollection.ENTITIES, points)
        pending.touch_facts(store.facts_of(chunk_ids))
        graph.unlink_chunks(chunk_ids)
        graph.upsert_mentions(extraction.mentions)
        graph.upsert_about(extraction.about)
        graph.upsert_relations(extraction.relations)
        pending.add(VectorCollection.FACTS, facts)
        if resolution.decisions or resolution.candidates:
            graph.apply_resolution(resolution.decisions, resolution.candidates, run_id)
        stored = store.entities.existing_ids(sorted(merged)) - {p.id for p in points}  # new ones are pending already
        pending.change(VectorCollection.ENTITIES, sorted(stored), MERGED_STATUS)
        named = {e.id for e in extraction.entities}
        removed = graph.drop_unnamed_entities(sorted(before - named))
        pending.change(VectorCollection.ENTITIES, sorted(store.entities.existing_ids(removed)), None)
        pending.touch_facts(store.facts_of(entity_ids=removed))
        touched = (set(before) | named) - set(removed)
        mark_communities_stale(journal, touched | set(graph.resolved_ids(sorted(touched)).values()) | set(removed))
        graph.set_config_hashes({document_id: hashes.resolve})
    return LinksReplaced(len(points), tuple(removed), len(facts))


def _new_points(
    store: KnowledgeStore, entities: list[Entity], merged: set[str], embedder: SentenceTransformersTextEmbedder
) -> list[VectorPoint]:
    """Vectors for the entities that have none yet (a merged one too, for an undo); stored vectors are kept."""
    have = store.entities.existing_ids([e.id for e in entities])
    new = [e for e in entities if e.id not in have]
    texts = [entity_embedding_text(e) for e in new]
    vectors = embedder.embed_batch(texts) if new else []
    return [
        VectorPoint(e.id, vector, text, entity_payload(e, merged=e.id in merged))
        for e, vector, text in zip(new, vectors, texts, strict=True)
    ]
