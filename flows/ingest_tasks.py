"""The stages of ingestion as Prefect tasks, each a thin call into components."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from tqdm import tqdm

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.extraction import ChunkFailure, Extraction, concat_extractions
from agrag.components.data_models.llm_estimate import LLMEstimate
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.ontology import PrunedReport
from agrag.components.data_models.phase_key import PhaseKey, batch_subject, document_subject
from agrag.components.data_models.resolution import Resolution
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import LLMBudgetError
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.extractors.llm_entity_extractor import LLMEntityExtractor
from agrag.components.extractors.ontology_pruner import OntologyPruner
from agrag.components.extractors.triples_file_extractor import TriplesFileExtractor
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.loaders.file_failure import FileFailure
from agrag.components.loaders.folder_loader import FolderLoader
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.flows.ingest_control import IngestControl, checkpoint
from agrag.flows.progress import progress_bar
from agrag.pipelines.config_models import (
    IngestConfig,
    LLMExtractorConfig,
    ResolutionConfig,
    TriplesExtractorConfig,
)
from agrag.pipelines.ingest_components import chunker_for, entity_resolver, ontology_from_config
from agrag.pipelines.ontology_hint import with_hint

T = TypeVar("T")

# Every task uses NO_CACHE and persist_result=False: stage inputs are large in-memory objects and open stores,
# which Prefect must neither hash nor persist.


@dataclass(frozen=True, slots=True)
class PhaseOutput(Generic[T]):
    """A phase's result, and for how many documents it was read from the journal of an interrupted run."""

    value: T
    reused: int


@task(name="load", cache_policy=NO_CACHE, persist_result=False)
def load_documents(
    folder: str, config: IngestConfig, files_root: Path | None = None, files: Sequence[str] | None = None
) -> tuple[list[LoadedDocument], list[FileFailure]]:
    """Read the folder's files, or only ``files`` of it (ids relative to ``files_root`` if inside it).

    Unreadable files are reported.
    """
    loader = FolderLoader(max_bytes=config.loader.max_file_bytes, suffixes=config.loader.suffixes)
    root_text = str(files_root) if files_root is not None else None
    out = loader.run(root=folder, files_root=root_text, files=list(files) if files is not None else None)
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


def document_key(phase: Phase, name: str, document: LoadedDocument) -> PhaseKey:
    """The marker of phase ``name`` for one document version."""
    return phase.key(name, document_subject(document.document.id, document.document.version))


def grouped_by_document(chunks: Sequence[Chunk]) -> dict[str, list[Chunk]]:
    """The chunks by document id, each document's in their order."""
    groups: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        groups.setdefault(chunk.document_id, []).append(chunk)
    return groups


@task(name="chunk", cache_policy=NO_CACHE, persist_result=False)
def chunk_documents(documents: list[LoadedDocument], config: IngestConfig, phase: Phase) -> PhaseOutput[list[Chunk]]:
    """Cut documents with the configured chunker (``ingest/chunker``); documents chunked before are read back.

    The chunks of a document over ``ingest.plan.limits.max_chunks_per_file`` are returned (the caller refuses it
    with their count) but not journaled: a 5 MB file of nested headings made 115,290 chunks, 40 MB of journal.
    """
    keys = {d.document.id: document_key(phase, "chunk", d) for d in documents}
    done = phase.journal.load_many(list(keys.values()))
    todo = [d for d in documents if keys[d.document.id] not in done]
    fresh = grouped_by_document(chunker_for(config.chunker).run(documents=todo)["chunks"]) if todo else {}
    cap = config.plan.limits.max_chunks_per_file
    kept = [d for d in todo if cap is None or len(fresh.get(d.document.id, [])) <= cap]
    phase.journal.save_many([(keys[d.document.id], fresh.get(d.document.id, [])) for d in kept])
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
    the documents in flight, and it checks ``control`` between batches of documents. The offline extractors are
    deterministic and store nothing: a run started again extracts again, which is faster than storing and reading
    back their batch's result (at 1,000,000 chunks the lexical extractor took about 3 minutes and pickling its
    result more than 4, doubling the run's memory).
    """
    settings = config.extractor
    searchable = [c for c in chunks if c.searchable]
    if isinstance(settings, LLMExtractorConfig):
        assert llm is not None  # checked before the run starts
        return _extract_with_llm(documents, searchable, config, llm, phase=phase, progress=progress, control=control)
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
        lexical = LexicalEntityExtractor(settings.min_name_length, config.ontology.entity_labels)
        result = (lexical.run(chunks=searchable)["extraction"], [])
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
    keys = {d.document.id: document_key(phase, "extract", d) for d in documents}
    done: dict[str, tuple[Extraction, list[ChunkFailure]]] = {
        key.subject: value for key, value in phase.journal.load_many(list(keys.values())).items()
    }
    todo = [c for c in searchable if keys[c.document_id].subject not in done]
    with progress_bar(progress, len(todo), "LLM extraction", "chunk") as tick:
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
    groups = grouped_by_document(chunks)
    for document_ids in document_runs(list(groups), groups, LLM_CHUNKS_PER_WORKER * max(1, concurrency)):
        yield [c for doc in document_ids for c in groups[doc]]


def document_versions(documents: Sequence[LoadedDocument]) -> list[tuple[str, str]]:
    """The (document id, version) pairs of loaded documents, the subjects of their phase markers."""
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
    """Drop what the ontology (``ingest/ontology``) does not declare, and report it with the hint that keeps it."""
    out = OntologyPruner(ontology_from_config(config.ontology)).run(extraction=extraction)
    return out["extraction"], with_hint(out["pruned"])


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
    journal: bool = True,
) -> PhaseOutput[Resolution]:
    """Merge duplicates against the batch and the stored entities; keep homonyms apart; list near misses.

    The decisions are journaled for the batch, and each document version points at them until it is committed: a
    run killed while writing, started again, writes the versions it had not committed with the same resolution,
    although part of the batch is already in the store (and no longer in the run's batch). ``journal=False`` skips
    storing them, for a run written by one bulk load: killed, it leaves nothing committed, so resolving again is
    as right as reading them back, and storing them cost minutes and gigabytes at 1,000,000 chunks.
    """
    pointed, every_version = _pointed_subjects(documents, phase)
    if every_version and len(pointed) == 1:
        reused: Resolution | None = phase.journal.load(phase.key("resolve", next(iter(pointed))))
        if reused is not None:
            return PhaseOutput(reused, reused=len(documents))
    subject = batch_subject(document_versions(documents))
    phase.journal.forget(pointed - {subject})  # a resolution no version will be written with any more
    key = phase.key("resolve", subject)
    stored = phase.journal.load(key)
    if stored is not None:
        _point_at_resolution(documents, phase, subject)
        return PhaseOutput(stored, reused=len(documents))
    resolver = entity_resolver(config, embedder.embed_batch, llm)
    # the batch's entities stored already: the short-form step leaves their merge (or its undo) as it stands
    ids = sorted({e.id for e in extraction.entities}) if config.short_forms.enabled else []
    already = sorted(store.graph.resolved_ids(ids)) if ids else []
    known = store.graph.canonical_entities()
    resolution: Resolution = resolver.run(extraction=extraction, known=known, stored=already)["resolution"]
    if journal:
        phase.journal.save(key, resolution)
    _point_at_resolution(documents, phase, subject)
    return PhaseOutput(resolution, reused=0)


RESOLVED_IN = "resolved-in"


def _point_at_resolution(documents: Sequence[LoadedDocument], phase: Phase, subject: str) -> None:
    """Record, per document version, the batch whose journaled resolution it is written with."""
    phase.journal.save_many([(document_key(phase, RESOLVED_IN, d), subject) for d in documents])


def resolution_subject(documents: Sequence[LoadedDocument], phase: Phase) -> str:
    """The batch whose journaled resolution these document versions are written with (their own by default)."""
    if documents:
        subject = phase.journal.load(document_key(phase, RESOLVED_IN, documents[0]))
        if isinstance(subject, str):
            return subject
    return batch_subject(document_versions(documents))


def _pointed_subjects(documents: Sequence[LoadedDocument], phase: Phase) -> tuple[set[str], bool]:
    """The batches whose journaled resolution these versions point at, and whether every version points at one.

    After a run committed some of its batches, the versions left are a part of its batch: written with its
    resolution (decisions made with the whole batch in view), they end as an uninterrupted run would have.
    """
    keys = [document_key(phase, RESOLVED_IN, d) for d in documents]
    pointers = phase.journal.load_many(keys)
    return {s for s in pointers.values() if isinstance(s, str)}, len(pointers) == len(keys)


def document_runs(document_ids: list[str], groups: dict[str, list[Chunk]], size: int) -> Iterator[list[str]]:
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
