"""The stages of ingestion as Prefect tasks, each a thin call into components."""

from __future__ import annotations

import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from tqdm import tqdm

from agrag.components.communities.leiden_community_detector import LeidenCommunityDetector
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import ChunkFailure, Extraction, concat_extractions
from agrag.components.data_models.llm_estimate import LLMEstimate
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.ontology import PrunedReport
from agrag.components.data_models.phase_key import GRAPH_SUBJECT, PhaseKey, batch_subject, document_subject
from agrag.components.data_models.resolution import MERGED, Resolution
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import LLMBudgetError
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.extractors.llm_entity_extractor import LLMEntityExtractor
from agrag.components.extractors.ontology_pruner import OntologyPruner
from agrag.components.extractors.triples_file_extractor import TriplesFileExtractor
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.loaders.file_failure import FileFailure
from agrag.components.loaders.folder_loader import FolderLoader
from agrag.components.reporters.extractive_community_reporter import ExtractiveCommunityReporter
from agrag.components.reporters.llm_community_reporter import LLMCommunityReporter
from agrag.components.resolvers.entity_resolver import EntityResolver
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.vector_payloads import (
    chunk_payload,
    community_payload,
    community_report_text,
    entity_payload,
)
from agrag.components.stores.vector_store import MERGED_STATUS, STATUS_FIELD, VectorPoint
from agrag.flows.commit_batches import CommitBatch, plan_commit_batches
from agrag.flows.ingest_control import IngestControl, checkpoint
from agrag.pipelines.config_models import (
    CommunityConfig,
    IngestConfig,
    LLMExtractorConfig,
    ResolutionConfig,
    TriplesExtractorConfig,
)
from agrag.pipelines.ingest_components import chunker_for, ontology_from_config

T = TypeVar("T")

# Every task uses NO_CACHE and persist_result=False: stage inputs are large in-memory objects and open stores,
# which Prefect must neither hash nor persist.


@dataclass(frozen=True, slots=True)
class PhaseOutput(Generic[T]):
    """A phase's result, and for how many documents it was read from the journal of an interrupted run."""

    value: T
    reused: int


@contextmanager
def _bar(enabled: bool, total: int, what: str, unit: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar for a long stage, or None when bars are off."""
    if not enabled or total == 0:
        yield None
        return
    with tqdm(total=total, desc=what, unit=unit, leave=False) as bar:
        yield bar.update


def chunk_embedding_text(chunk: Chunk) -> str:
    """What the chunk's vectors are computed from: where it sits, then what it says.

    A heading the chunk's first line already states is not repeated.
    """
    path = chunk.heading_path if chunk.heading_path[:1] == (chunk.title,) else (chunk.title, *chunk.heading_path)
    first_line = chunk.text.split("\n", 1)[0].lstrip("#").strip()
    if path and path[-1] == first_line:
        path = path[:-1]
    prefix = " > ".join(p for p in path if p)
    return f"{prefix}\n{chunk.text}" if prefix else chunk.text


def entity_embedding_text(entity: Entity) -> str:
    """What the entity's vectors are computed from: its name, type and description."""
    return f"{entity.name} ({entity.label}): {entity.description}"


@task(name="load", cache_policy=NO_CACHE, persist_result=False)
def load_documents(folder: str, config: IngestConfig) -> tuple[list[LoadedDocument], list[FileFailure]]:
    """Read the folder's files; unreadable files are reported, not fatal."""
    loader = FolderLoader(max_bytes=config.loader.max_file_bytes, suffixes=config.loader.suffixes)
    out = loader.run(root=folder)
    return out["documents"], out["failures"]  # type: ignore[return-value]


@task(name="select-changed", cache_policy=NO_CACHE, persist_result=False)
def select_changed(documents: list[LoadedDocument], store: KnowledgeStore) -> list[LoadedDocument]:
    """Keep the documents whose version is not the stored current one (content hashes decide)."""
    stored = store.graph.document_versions([d.document.id for d in documents])
    return [d for d in documents if stored.get(d.document.id) != d.document.version]


@dataclass(frozen=True, slots=True)
class Phase:
    """Where a phase keeps its markers: the journal of the data dir and the phase's configuration hash."""

    journal: SqlitePhaseJournal
    config_hash: str

    def key(self, name: str, subject: str) -> PhaseKey:
        """The marker of phase ``name`` for ``subject`` under this configuration."""
        return PhaseKey(subject, name, self.config_hash)


def _document_key(phase: Phase, name: str, document: LoadedDocument) -> PhaseKey:
    return phase.key(name, document_subject(document.document.id, document.document.version))


def _grouped(chunks: Sequence[Chunk]) -> dict[str, list[Chunk]]:
    groups: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        groups.setdefault(chunk.document_id, []).append(chunk)
    return groups


@task(name="chunk", cache_policy=NO_CACHE, persist_result=False)
def chunk_documents(documents: list[LoadedDocument], config: IngestConfig, phase: Phase) -> PhaseOutput[list[Chunk]]:
    """Cut documents with the configured chunker (``ingest/chunker``); documents chunked before are read back."""
    keys = {d.document.id: _document_key(phase, "chunk", d) for d in documents}
    done = phase.journal.load_many(list(keys.values()))
    todo = [d for d in documents if keys[d.document.id] not in done]
    fresh = _grouped(chunker_for(config.chunker).run(documents=todo)["chunks"]) if todo else {}
    phase.journal.save_many([(keys[d.document.id], fresh.get(d.document.id, [])) for d in todo])
    chunks = [c for d in documents for c in done.get(keys[d.document.id], fresh.get(d.document.id, []))]
    return PhaseOutput(chunks, reused=len(documents) - len(todo))


@dataclass(frozen=True, slots=True)
class ExtractionOutcome:
    """What the extract phase found, the chunks it could not read, and the LLM estimate it checked, if any."""

    extraction: Extraction
    failures: list[ChunkFailure]
    estimate: LLMEstimate | None = None


@task(name="extract", cache_policy=NO_CACHE, persist_result=False)
def extract_entities(
    documents: list[LoadedDocument],
    chunks: list[Chunk],
    config: IngestConfig,
    llm: OpenAIChatClient | None,
    *,
    phase: Phase,
    progress: bool,
    control: IngestControl | None = None,
) -> PhaseOutput[ExtractionOutcome]:
    """Find entities and relations in the searchable chunks with the configured extractor (``ingest/extractor``).

    LLM extraction stores each document's result as soon as its chunks are answered, so a killed run loses only
    the documents in flight, and it checks ``control`` between batches of documents; the offline extractors are
    fast and store the batch's result at once.
    """
    settings = config.extractor
    searchable = [c for c in chunks if c.searchable]
    if isinstance(settings, LLMExtractorConfig):
        assert llm is not None  # checked before the run starts
        return _extract_with_llm(documents, searchable, config, llm, phase=phase, progress=progress, control=control)
    key = phase.key("extract", batch_subject(_versions(documents)))
    stored = phase.journal.load(key)
    if stored is not None:
        return PhaseOutput(ExtractionOutcome(*stored), reused=len(documents))
    if isinstance(settings, TriplesExtractorConfig):
        out = TriplesFileExtractor(settings.path).run(chunks=searchable)
        if out["unmatched_chunks"]:
            get_run_logger().warning(
                "%d of %d chunks match no passage of %s and got no entities",
                out["unmatched_chunks"],
                len(searchable),
                settings.path,
            )
        result: tuple[Extraction, list[ChunkFailure]] = (out["extraction"], [])
    else:
        lexical = LexicalEntityExtractor(min_name_length=settings.min_name_length)
        result = (lexical.run(chunks=searchable)["extraction"], [])
    phase.journal.save(key, result)
    return PhaseOutput(ExtractionOutcome(*result), reused=0)


def _extract_with_llm(
    documents: list[LoadedDocument],
    searchable: list[Chunk],
    config: IngestConfig,
    llm: OpenAIChatClient,
    *,
    phase: Phase,
    progress: bool,
    control: IngestControl | None,
) -> PhaseOutput[ExtractionOutcome]:
    settings = config.extractor
    assert isinstance(settings, LLMExtractorConfig)
    keys = {d.document.id: _document_key(phase, "extract", d) for d in documents}
    done: dict[str, tuple[Extraction, list[ChunkFailure]]] = {
        key.subject: value for key, value in phase.journal.load_many(list(keys.values())).items()
    }
    todo = [c for c in searchable if keys[c.document_id].subject not in done]
    with _bar(progress, len(todo), "LLM extraction", "chunk") as tick:
        extractor = LLMEntityExtractor(
            llm,
            ontology_from_config(config.ontology),
            prompt=settings.prompt,
            gleaning_rounds=settings.gleaning_rounds,
            concurrency=settings.concurrency,
            progress=tick,
        )
        estimate = extractor.estimate(todo)
        _within_budget(estimate, config.max_llm_calls)
        # a stop is honoured between batches: the requests of a batch run to the end and are journaled
        for batch in _llm_batches(todo, settings.concurrency):
            checkpoint(control)
            for document_id, extraction, failures in extractor.run_by_document(batch):
                phase.journal.save(keys[document_id], (extraction, failures))
                done[keys[document_id].subject] = (extraction, failures)
                for failure in failures:
                    get_run_logger().warning("chunk %s got no entities: %s", failure.chunk_id, failure.reason)
    # documents in folder order, whichever run extracted them, so a resumed run resolves exactly like a clean one
    parts = [done[keys[d.document.id].subject] for d in documents if keys[d.document.id].subject in done]
    extraction = concat_extractions(p[0] for p in parts)
    reused = len(documents) - len({c.document_id for c in todo})
    return PhaseOutput(ExtractionOutcome(extraction, [f for p in parts for f in p[1]], estimate), reused=reused)


# Chunks sent per LLM extraction batch, per request in flight: enough to keep every worker busy, few enough that a
# stop asked for (IngestControl.cancel) waits for little.
LLM_CHUNKS_PER_WORKER = 16


def _llm_batches(chunks: list[Chunk], concurrency: int) -> Iterator[list[Chunk]]:
    """The chunks in batches of whole documents, about ``LLM_CHUNKS_PER_WORKER`` per worker each."""
    groups = _grouped(chunks)
    for document_ids in _slices(list(groups), groups, LLM_CHUNKS_PER_WORKER * max(1, concurrency)):
        yield [c for doc in document_ids for c in groups[doc]]


def _versions(documents: Sequence[LoadedDocument]) -> list[tuple[str, str]]:
    return [(d.document.id, d.document.version) for d in documents]


def _within_budget(estimate: LLMEstimate, limit: int) -> None:
    """Announce the estimate of LLM extraction; refuse it, before any call, when it is over ``ingest.max_llm_calls``.

    The estimate goes to the run's log (the Prefect UI) and to the terminal (stderr, above any progress bar), before
    the first call.
    """
    line = f"LLM extraction estimate: {estimate.summary()}; limit ingest.max_llm_calls={limit}"
    get_run_logger().info(line)
    tqdm.write(line, file=sys.stderr)
    if estimate.calls > limit:
        raise LLMBudgetError("LLM extraction", estimate, limit)


@task(name="prune", cache_policy=NO_CACHE, persist_result=False)
def prune_to_ontology(extraction: Extraction, config: IngestConfig) -> tuple[Extraction, PrunedReport]:
    """Drop what the ontology (``ingest/ontology``) does not declare, and report it."""
    out = OntologyPruner(ontology_from_config(config.ontology)).run(extraction=extraction)
    return out["extraction"], out["pruned"]


@task(name="resolve", cache_policy=NO_CACHE, persist_result=False)
def resolve_entities(
    documents: list[LoadedDocument],
    extraction: Extraction,
    config: ResolutionConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    *,
    llm: OpenAIChatClient | None,
    phase: Phase,
) -> PhaseOutput[Resolution]:
    """Merge duplicates against the batch and the stored entities; keep homonyms apart; list near misses.

    The decisions are journaled for the batch, and each document version points at them until it is committed: a
    run killed while writing, started again, writes the versions it had not committed with the same resolution,
    although part of the batch is already in the store (and no longer in the run's batch).
    """
    pointed, every_version = _pointed_subjects(documents, phase)
    if every_version and len(pointed) == 1:
        reused: Resolution | None = phase.journal.load(phase.key("resolve", next(iter(pointed))))
        if reused is not None:
            return PhaseOutput(reused, reused=len(documents))
    subject = batch_subject(_versions(documents))
    phase.journal.forget(pointed - {subject})  # a resolution no version will be written with any more
    key = phase.key("resolve", subject)
    stored = phase.journal.load(key)
    if stored is not None:
        _point_at_resolution(documents, phase, subject)
        return PhaseOutput(stored, reused=len(documents))
    resolver = EntityResolver(
        fuzzy_enabled=config.fuzzy.enabled,
        fuzzy_merge_threshold=config.fuzzy.merge_threshold,
        fuzzy_candidate_threshold=config.fuzzy.candidate_threshold,
        embed=embedder.embed_batch if config.embedding.enabled else None,
        embedding_threshold=config.embedding.threshold,
        llm=llm if config.llm.enabled else None,
        llm_max_pairs=config.llm.max_pairs,
    )
    resolution: Resolution = resolver.run(extraction=extraction, known=store.graph.canonical_entities())["resolution"]
    phase.journal.save(key, resolution)
    _point_at_resolution(documents, phase, subject)
    return PhaseOutput(resolution, reused=0)


RESOLVED_IN = "resolved-in"


def _point_at_resolution(documents: Sequence[LoadedDocument], phase: Phase, subject: str) -> None:
    """Record, per document version, the batch whose journaled resolution it is written with."""
    phase.journal.save_many([(_document_key(phase, RESOLVED_IN, d), subject) for d in documents])


def resolution_subject(documents: Sequence[LoadedDocument], phase: Phase) -> str:
    """The batch whose journaled resolution these document versions are written with (their own by default)."""
    if documents:
        subject = phase.journal.load(_document_key(phase, RESOLVED_IN, documents[0]))
        if isinstance(subject, str):
            return subject
    return batch_subject(_versions(documents))


def _pointed_subjects(documents: Sequence[LoadedDocument], phase: Phase) -> tuple[set[str], bool]:
    """The batches whose journaled resolution these versions point at, and whether every version points at one.

    After a run committed some of its batches, the versions left are a part of its batch: written with its
    resolution (decisions made with the whole batch in view), they end as an uninterrupted run would have.
    """
    keys = [_document_key(phase, RESOLVED_IN, d) for d in documents]
    pointers = phase.journal.load_many(keys)
    return {s for s in pointers.values() if isinstance(s, str)}, len(pointers) == len(keys)


@dataclass(frozen=True, slots=True)
class EmbeddedPoints:
    """The vector points one ingest writes: searchable chunks and new entities."""

    chunks: list[VectorPoint]
    entities: list[VectorPoint]


# Chunks embedded between two journal saves: small enough to lose little to a kill, large enough to batch well.
EMBED_SLICE = 512


@task(name="embed", cache_policy=NO_CACHE, persist_result=False)
def embed(
    documents: list[LoadedDocument],
    chunks: list[Chunk],
    entities: list[Entity],
    merged: set[str],
    embedder: SentenceTransformersTextEmbedder,
    *,
    phase: Phase,
    control: IngestControl | None = None,
) -> PhaseOutput[EmbeddedPoints]:
    """Embed the searchable chunks and the entities that have no vectors yet (merged ones too, for an undo).

    Chunk vectors are journaled per document, a slice of documents at a time, so a killed run keeps them; ``control``
    is checked between slices.
    """
    keys = {d.document.id: _document_key(phase, "embed", d) for d in documents}
    done: dict[str, list[VectorPoint]] = {
        key.subject: value for key, value in phase.journal.load_many(list(keys.values())).items()
    }
    groups = _grouped([c for c in chunks if c.searchable])
    todo = [d.document.id for d in documents if keys[d.document.id].subject not in done]
    for slice_ids in _slices(todo, groups, EMBED_SLICE):
        checkpoint(control)
        batch = [c for doc in slice_ids for c in groups.get(doc, [])]
        texts = [chunk_embedding_text(c) for c in batch]
        points = {
            c.id: VectorPoint(c.id, vector, text, chunk_payload(c))
            for c, vector, text in zip(batch, embedder.embed_batch(texts), texts, strict=True)
        }
        owned = {doc: [points[c.id] for c in groups.get(doc, [])] for doc in slice_ids}
        phase.journal.save_many([(keys[doc], own) for doc, own in owned.items()])
        done.update({keys[doc].subject: own for doc, own in owned.items()})
    chunk_points = [p for d in documents for p in done[keys[d.document.id].subject]]
    entity_texts = [entity_embedding_text(e) for e in entities]
    entity_points = [
        VectorPoint(e.id, vector, text, entity_payload(e, merged=e.id in merged))
        for e, vector, text in zip(entities, embedder.embed_batch(entity_texts), entity_texts, strict=True)
    ]
    return PhaseOutput(EmbeddedPoints(chunk_points, entity_points), reused=len(documents) - len(todo))


def _slices(document_ids: list[str], groups: dict[str, list[Chunk]], size: int) -> Iterator[list[str]]:
    """Consecutive runs of whole documents holding about ``size`` chunks each."""
    current: list[str] = []
    count = 0
    for doc in document_ids:
        current.append(doc)
        count += len(groups.get(doc, []))
        if count >= size:
            yield current
            current, count = [], 0
    if current:
        yield current


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """Chunks of older versions superseded by the write, entities that only they supported (deleted), batches."""

    superseded: int
    entities_removed: int
    batches: int = 1


# Chunks per commit batch when the caller does not say (``ingest.write_batch_chunks``).
WRITE_BATCH_CHUNKS = 500


@task(name="write", cache_policy=NO_CACHE, persist_result=False)
def write_stores(
    store: KnowledgeStore,
    documents: list[LoadedDocument],
    chunks: list[Chunk],
    resolution: Resolution,
    points: EmbeddedPoints,
    *,
    phase: Phase,
    batch_chunks: int = WRITE_BATCH_CHUNKS,
    control: IngestControl | None = None,
) -> WriteOutcome:
    """Write chunks, entities, mentions, relations and resolution decisions in commit batches of whole documents.

    Each batch (about ``batch_chunks`` chunks, see ``plan_commit_batches``) is written under ``store.writing()``:
    its chunks and vectors, its entities and links, the decisions that concern it, the retirement of its
    documents' older versions (their chunks marked superseded; what only they supported leaves the current graph),
    then the commit of its documents, which is what makes the next run see them as unchanged. A reader in the same
    process therefore waits for one batch at most and never sees a half-written document. Every write is an upsert
    keyed by id and the retirement is idempotent, so a run killed inside a batch writes the same again when started
    again; a run killed between batches resumes with the batches left, written with the same journaled resolution
    and merge-log run id. ``control`` is checked between batches. The entities a batch touched are recorded as
    waiting for fresh community reports before its commit, so a kill after it still refreshes them.
    """
    subject = resolution_subject(documents, phase)
    run_key = phase.key("run-id", subject)
    run_id = phase.journal.load(run_key)
    if run_id is None:  # one id for the batch, however often it is resumed, so the merge log is written once
        run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
        phase.journal.save(run_key, run_id)
    merged = {d.member_id: d.resolved_id for d in resolution.decisions if d.decision == MERGED}
    batches = plan_commit_batches(
        documents, chunks, resolution, chunk_points=points.chunks, entity_points=points.entities, size=batch_chunks
    )
    superseded = removed = 0
    for batch in batches:
        checkpoint(control)
        with store.writing():
            written = _write_batch(store, batch, run_id, merged, phase)
        phase.journal.forget(document_subject(*v) for v in _versions(batch.documents))
        superseded, removed = superseded + written.superseded, removed + written.entities_removed
    phase.journal.forget([subject, batch_subject(_versions(documents))])
    return WriteOutcome(superseded, removed, len(batches))


def _write_batch(
    store: KnowledgeStore, batch: CommitBatch, run_id: str, merged: dict[str, str], phase: Phase
) -> WriteOutcome:
    """Write one commit batch and commit its documents (the caller holds ``store.writing()``)."""
    superseded = store.graph.write_chunks([d.document for d in batch.documents], batch.chunks)
    store.chunks.upsert(batch.chunk_points)
    store.graph.upsert_entities(batch.entities)
    store.entities.upsert(batch.entity_points)
    store.graph.upsert_mentions(batch.mentions)
    store.graph.upsert_about(batch.about)
    store.graph.upsert_relations(batch.relations)
    if batch.decisions or batch.candidates:
        store.graph.apply_resolution(batch.decisions, batch.candidates, run_id, positions=batch.positions)
    store.entities.set_payload(sorted(batch.merged), {STATUS_FIELD: MERGED_STATUS})
    # after the new version's links, so what it still supports stays (and what later batches name)
    retirement = store.retire_chunks(superseded, keep=batch.keep)
    named = {m.entity_id for m in (*batch.mentions, *batch.about)} | set(retirement.touched)
    mark_communities_stale(phase.journal, named | {merged[e] for e in named if e in merged})
    chunk_counts = Counter(c.document_id for c in batch.chunks)
    store.graph.commit_documents(
        [(d.document, chunk_counts[d.document.id]) for d in batch.documents], phase.config_hash
    )
    return WriteOutcome(len(superseded), len(retirement.removed))


COMMUNITIES_STALE = PhaseKey(GRAPH_SUBJECT, "communities-stale", "")


def mark_communities_stale(journal: SqlitePhaseJournal, touched: set[str]) -> frozenset[str]:
    """Record that the graph changed around ``touched`` entities; return every entity touched since the last refresh.

    Communities around them, and their reports, must be redone.
    """
    stale = (stale_communities(journal) or frozenset()) | touched
    journal.save(COMMUNITIES_STALE, stale)
    return stale


def stale_communities(journal: SqlitePhaseJournal) -> frozenset[str] | None:
    """The entities touched since communities were last refreshed, or None when they are up to date."""
    touched: frozenset[str] | None = journal.load(COMMUNITIES_STALE)
    return touched


@task(name="communities", cache_policy=NO_CACHE, persist_result=False)
def detect_communities(store: KnowledgeStore, config: CommunityConfig) -> list[Community]:
    """Hierarchical Leiden over the resolved entity graph."""
    entity_ids, edges = store.graph.entity_graph()
    detector = LeidenCommunityDetector(
        max_levels=config.max_levels,
        max_cluster_size=config.max_cluster_size,
        min_size=config.min_size,
        resolution=config.resolution,
        seed=config.seed,
    )
    communities: list[Community] = detector.run(entity_ids=entity_ids, edges=edges)["communities"]
    return communities


@dataclass(frozen=True, slots=True)
class ReportOutcome:
    """How the reports stage went: reports by method, reused reports, and LLM fallbacks."""

    by_method: dict[str, int]
    reused: int
    fallbacks: int


@task(name="reports", cache_policy=NO_CACHE, persist_result=False)
def write_reports(
    store: KnowledgeStore,
    communities: list[Community],
    config: CommunityConfig,
    llm: OpenAIChatClient | None,
    embedder: SentenceTransformersTextEmbedder,
    *,
    touched: frozenset[str] = frozenset(),
    progress: bool = False,
) -> ReportOutcome:
    """Report on every community, embed the reports, and store the hierarchy in place of the previous one.

    A community whose members did not change and none of whose members' text changed (``touched``) keeps its
    stored report: no LLM call, no new sentence picking. Only the store writes, at the end, hold
    ``store.writing()``. Finishing clears the journal's stale mark.
    """
    previous = {c.id: c for c in store.graph.communities()}
    wanted_method = "llm" if llm is not None else "extractive"
    reused = {
        c.id
        for c in communities
        if (old := previous.get(c.id))
        and old.report
        and old.report.method == wanted_method
        and touched.isdisjoint(c.entity_ids)
    }
    todo = [c for c in communities if c.id not in reused]
    fallbacks = 0
    written: dict[str, Community] = {}
    if todo:
        entities, relations, chunks, mentions = store.graph.community_inputs(
            sorted({e for c in todo for e in c.entity_ids})
        )
        extractive = ExtractiveCommunityReporter(sentences=config.report_sentences)
        if llm is None:
            reported = extractive.run(todo, entities, relations, chunks, mentions)["communities"]
        else:
            with _bar(progress, len(todo), "LLM community reports", "report") as tick:
                reporter = LLMCommunityReporter(llm, fallback=extractive, progress=tick)
                out = reporter.run(todo, entities, relations, chunks, mentions)
            reported, fallbacks = out["communities"], int(out["fallbacks"])
        written = {c.id: c for c in reported}
    final = [written.get(c.id) or replace(c, report=previous[c.id].report) for c in communities]
    texts = [community_report_text(c) for c in final]
    vectors = embedder.embed_batch(texts) if final else []
    with store.writing():  # the reports were written and embedded above, outside it: only the writes wait here
        store.communities.upsert(
            [VectorPoint(c.id, v, t, community_payload(c)) for c, v, t in zip(final, vectors, texts, strict=True)]
        )
        store.communities.delete(sorted(set(previous) - {c.id for c in final}))
        store.graph.replace_communities(final)
    if store.journal is not None:
        store.journal.forget([GRAPH_SUBJECT], COMMUNITIES_STALE.phase)
    return ReportOutcome(dict(Counter(c.report.method for c in final if c.report)), len(reused), fallbacks)
