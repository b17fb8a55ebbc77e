"""The write stage as a Prefect task: commit batches of whole documents, each under the store's write lock."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass

from prefect import task
from prefect.cache_policies import NO_CACHE

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.graph_load import GraphLoad
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.phase_key import batch_subject, document_subject
from agrag.components.data_models.resolution import MERGED, Resolution
from agrag.components.stores.disk_space import BYTES_PER_POINT
from agrag.components.stores.heap import release_free_heap
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.pending_vectors import PendingVectors
from agrag.components.stores.vector_store import MERGED_STATUS, VectorCollection
from agrag.flows.commit_batches import CommitBatch, plan_commit_batches
from agrag.flows.community_tasks import mark_communities_stale
from agrag.flows.embed_task import EmbeddedPoints
from agrag.flows.ingest_control import IngestControl, checkpoint
from agrag.flows.ingest_tasks import Phase, document_versions, resolution_subject


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """Chunks of older versions superseded by the write, entities that only they supported (deleted), batches."""

    superseded: int
    entities_removed: int
    batches: int = 1


@task(name="write", cache_policy=NO_CACHE, persist_result=False)
def write_stores(
    store: KnowledgeStore,
    documents: list[LoadedDocument],
    chunks: list[Chunk],
    resolution: Resolution,
    points: EmbeddedPoints,
    *,
    phase: Phase,
    batch_chunks: int,
    control: IngestControl | None = None,
    document_hashes: Mapping[str, str] | None = None,
    plans: Mapping[str, str] | None = None,
    bulk_min_chunks: int | None = None,
) -> WriteOutcome:
    """Write chunks, entities, mentions, relations and resolution decisions in commit batches of whole documents.

    Each batch (about ``batch_chunks`` chunks, see ``plan_commit_batches``) is one commit (``store.committing()``):
    its chunks and vectors, its entities and links, the decisions that concern it, the retirement of its
    documents' older versions (their chunks marked superseded; what only they supported leaves the current graph),
    then the commit of its documents, which is what makes the next run see them as unchanged. The commit is one
    graph statement that makes the batch's chunks current, and its vectors stay pending (found by no search) until
    it has run, so a reader, in this process or after a kill at any point, never sees a chunk of a version that is
    not committed; a reader in the same process waits for one batch at most. Every write is an upsert keyed by id
    and the retirement is idempotent, so a run killed inside a batch writes the same again when started again; a
    run killed between batches resumes with the batches left, written with the same journaled resolution and
    merge-log run id. ``control`` is checked between batches. The entities a batch touched are recorded as
    waiting for fresh community reports before its commit, so a kill after it still refreshes them. Each document
    is committed with its settings hash (``document_hashes``, else the phase's) and its plan JSON (``plans``).

    A run of at least ``bulk_min_chunks`` chunks (None: never) into an empty graph is written as one batch instead,
    its graph by bulk copies in one transaction (``_bulk_write``): Kùzu's merges slow down as the graph grows.

    Raises:
        NoSpaceLeftError: the data dir's disk lacks what the whole stage will write (``BYTES_PER_POINT`` a vector
            point, above ``AGRAG_MIN_FREE_MB``), checked before it writes anything; or a batch's own check failed.
    """
    written_points = len(points.chunks) + len(points.entities) + len(points.facts)
    store.require_room(
        BYTES_PER_POINT * written_points,
        f"write {len(chunks)} chunks, {len(points.entities)} entity and {len(points.facts)} fact vectors",
    )
    subject = resolution_subject(documents, phase)
    run_key = phase.key("run-id", subject)
    run_id = phase.journal.load(run_key)
    if run_id is None:  # one id for the batch, however often it is resumed, so the merge log is written once
        run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
        phase.journal.save(run_key, run_id)
    merged = {d.member_id: d.resolved_id for d in resolution.decisions if d.decision == MERGED}
    bulk = writes_in_bulk(store, len(chunks), bulk_min_chunks)
    superseded = removed = 0
    recorded = (document_hashes or {}, plans or {})
    # a bulk load is one commit, from its vectors to its documents: a reader sees none of it or all of it
    with store.committing() if bulk else nullcontext() as whole:
        if whole is not None:  # its vectors first, then dropped: the graph's copy needs the memory they took
            _upsert_and_release(whole, points)
        batches = plan_commit_batches(
            documents,
            chunks,
            resolution,
            chunk_points=points.chunks,
            entity_points=points.entities,
            size=len(chunks) + 1 if bulk else batch_chunks,
            fact_points=points.facts,
        )
        for batch in batches:
            checkpoint(control)
            if whole is not None:
                written = _bulk_write(store, whole, batch, run_id, phase, recorded=recorded)
            else:
                with store.committing() as pending:
                    written = _write_batch(store, pending, batch, run_id, merged=merged, phase=phase, recorded=recorded)
            phase.journal.forget(document_subject(*v) for v in document_versions(batch.documents))
            if control is not None:
                control.committed(len(batch.documents))
            superseded, removed = superseded + written.superseded, removed + written.entities_removed
    phase.journal.forget([subject, batch_subject(document_versions(documents))])
    return WriteOutcome(superseded, removed, len(batches))


def writes_in_bulk(store: KnowledgeStore, chunks: int, bulk_min_chunks: int | None) -> bool:
    """Whether ``write_stores`` writes a run of ``chunks`` chunks as one bulk load (see there)."""
    return bulk_min_chunks is not None and chunks >= bulk_min_chunks and store.graph.graph_is_empty()


def _bulk_write(
    store: KnowledgeStore,
    pending: PendingVectors,
    batch: CommitBatch,
    run_id: str,
    phase: Phase,
    *,
    recorded: tuple[Mapping[str, str], Mapping[str, str]],
) -> WriteOutcome:
    """Write a first ingestion's graph into the empty graph as one batch, in the commit ``pending`` belongs to.

    Its vectors were written before, pending (``_upsert_and_release``). The graph's rows go in by bulk copies
    (``bulk_load``), and the resolution and the commit of the documents in the same transaction, so a run killed
    inside it leaves the graph empty and its vectors pending, and writes it all again when started again (the
    vectors are upserts by id). The caller holds ``store.committing()``.
    """
    _bulk_graph(store, batch, run_id, phase, recorded=recorded)
    pending.change(VectorCollection.ENTITIES, sorted(batch.merged), MERGED_STATUS)
    return WriteOutcome(0, 0)


def _upsert_and_release(pending: PendingVectors, points: EmbeddedPoints) -> None:
    """Write a bulk load's vectors (pending), then empty ``points`` and hand the freed heap back to the system.

    Why: at 1,000,000 chunks the points are gigabytes (a vector, a text and a payload each) that Qdrant Edge holds
    once written, and the graph's copy after them takes gigabytes more; written beside the copy, as before, the
    two together did not fit 24 GB. Nothing is committed until the graph's transaction commits the documents, and
    a vector write that fails leaves the graph untouched. With one commit batch, every entity's vector is written
    as the embed stage made it (``_unmerged_until_applied`` changes nothing) and merged members are marked after.
    """
    pending.add(VectorCollection.CHUNKS, points.chunks)
    pending.add(VectorCollection.ENTITIES, points.entities)
    pending.add(VectorCollection.FACTS, points.facts, as_written=True)  # an empty graph gets exactly these relations
    points.chunks.clear()  # the caller's lists: the flow keeps its EmbeddedPoints until the stage returns
    points.entities.clear()
    points.facts.clear()
    release_free_heap()  # and what the extraction and resolution freed, which glibc would keep through the load


def _bulk_graph(
    store: KnowledgeStore,
    batch: CommitBatch,
    run_id: str,
    phase: Phase,
    *,
    recorded: tuple[Mapping[str, str], Mapping[str, str]],
) -> None:
    load = GraphLoad(
        documents=tuple(d.document for d in batch.documents),
        chunks=batch.chunks,
        entities=batch.entities,
        mentions=batch.mentions,
        about=batch.about,
        relations=batch.relations,
    )
    named = {m.entity_id for m in (*batch.mentions, *batch.about)}
    mark_communities_stale(phase.journal, named | {batch.merged[e] for e in named if e in batch.merged})
    with store.graph.transaction():
        store.graph.bulk_load(load)
        if batch.decisions or batch.candidates:
            store.graph.apply_resolution(batch.decisions, batch.candidates, run_id, positions=batch.positions)
        _commit(store, batch, phase, recorded)


def _write_batch(
    store: KnowledgeStore,
    pending: PendingVectors,
    batch: CommitBatch,
    run_id: str,
    *,
    merged: dict[str, str],
    phase: Phase,
    recorded: tuple[Mapping[str, str], Mapping[str, str]],
) -> WriteOutcome:
    """Write one commit batch and commit its documents, in the commit ``pending`` belongs to.

    The caller holds ``store.committing()``: the batch's chunks are uncommitted (no read sees them) and its vectors
    pending (found by no search) until ``_commit`` has committed its documents, the last statement.
    """
    superseded = store.graph.write_chunks([d.document for d in batch.documents], batch.chunks)
    pending.add(VectorCollection.CHUNKS, batch.chunk_points)
    store.graph.upsert_entities(batch.entities)
    pending.add(VectorCollection.ENTITIES, batch.entity_points)
    store.graph.upsert_mentions(batch.mentions)
    store.graph.upsert_about(batch.about)
    store.graph.upsert_relations(batch.relations)
    if batch.decisions or batch.candidates:
        store.graph.apply_resolution(batch.decisions, batch.candidates, run_id, positions=batch.positions)
    pending.change(VectorCollection.ENTITIES, sorted(batch.merged), MERGED_STATUS)
    # after the new version's links, so what it still supports stays (and what later batches name)
    incoming = [c.id for c in batch.chunks]
    retirement = store.retire_chunks(superseded, keep=batch.keep, pending=pending, incoming=incoming)
    store.write_facts(pending, batch.fact_points, incoming)  # as the commit will leave them: the last write before it
    named = {m.entity_id for m in (*batch.mentions, *batch.about)} | set(retirement.touched)
    mark_communities_stale(phase.journal, named | {merged[e] for e in named if e in merged})
    _commit(store, batch, phase, recorded)
    return WriteOutcome(len(superseded), len(retirement.removed))


def _commit(
    store: KnowledgeStore, batch: CommitBatch, phase: Phase, recorded: tuple[Mapping[str, str], Mapping[str, str]]
) -> None:
    """Commit the batch's documents with their chunk counts, settings hashes and plans: written last."""
    chunk_counts = Counter(c.document_id for c in batch.chunks)
    store.graph.commit_documents(
        [(d.document, chunk_counts[d.document.id]) for d in batch.documents],
        phase.config_hash,
        config_hashes=recorded[0],
        plans=recorded[1],
    )
