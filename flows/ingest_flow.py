"""The ingestion flow: a folder of documents into the graph and vector stores."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar, cast

from prefect import flow
from prefect.utilities.annotations import quote

from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.phase_key import document_subject
from agrag.components.data_models.resolution import KEPT_APART, MERGED
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import StoreError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.loaders.file_failure import FileFailure
from agrag.components.loaders.files_root import resolve_ingest_folder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.flows import ingest_tasks as tasks
from agrag.flows.ingest_report import FAILED, INGESTED, UNCHANGED, FileStatus, IngestReport
from agrag.flows.ingest_tasks import Phase
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.config_models import AgragConfig
from agrag.pipelines.ingest_components import PhaseHashes, check_llm_needs, llm_client, phase_hashes, reports_use_llm
from agrag.pipelines.settings import load_agrag_settings, load_retrieval_settings
from agrag.pipelines.store_factory import open_embedding_cache, open_knowledge_store

T = TypeVar("T")


def _as_is(value: T) -> T:
    """Hand ``value`` to a task without Prefect walking every element (30 s for 10k vectors otherwise)."""
    return cast(T, quote(value))


class _StageClock:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def run(self, name: str, stage: Callable[[], T]) -> T:
        started = time.perf_counter()
        try:
            return stage()
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started


def ingest_into(
    folder: str,
    config: AgragConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    *,
    llm: OpenAIChatClient | None = None,
    progress: bool = False,
) -> IngestReport:
    """Run every stage on ``folder`` against open stores; unchanged documents are skipped before any work.

    Each phase journals what it finished (per document version and configuration hash) in the store's phase
    journal, so a run that was killed, started again with the same files and settings, redoes only unfinished work.

    Raises:
        LLMNotConfiguredError: the configuration needs an LLM and ``llm`` is None (raised before any work).
        StoreError: ``store`` was opened without a phase journal.
    """
    check_llm_needs(config.ingest, llm)
    if store.journal is None:
        raise StoreError("Ingestion needs the store's phase journal; open the store with open_knowledge_store.")
    journal = store.journal
    hashes = phase_hashes(config, llm.model if llm is not None else None)
    calls_before = (llm.calls, llm.cache_hits) if llm is not None else (0, 0)
    clock = _StageClock()
    documents, failures = clock.run("load", lambda: tasks.load_documents(folder, config.ingest))
    changed = clock.run("select-changed", lambda: tasks.select_changed(_as_is(documents), store))
    # work journaled for another version of these files can never be reused
    journal.forget_documents_except(
        {document_subject(d.document.id, d.document.version) for d in changed}, [d.document.id for d in documents]
    )
    report = IngestReport(
        folder=folder,
        documents_seen=len(documents),
        documents_ingested=len(changed),
        documents_unchanged=len(documents) - len(changed),
        failures=tuple(failures),
        files=_file_statuses(documents, changed, failures),
        other_settings=_other_settings(documents, changed, store, hashes.resolve),
    )
    ingest = config.ingest
    if changed:
        report = _ingest_changed(
            report,
            clock,
            changed,
            config=config,
            store=store,
            journal=journal,
            embedder=embedder,
            llm=llm,
            hashes=hashes,
            progress=progress,
        )
    touched = tasks.stale_communities(journal)
    if ingest.communities.enabled and touched is not None:  # also when a killed run left them stale
        report = _communities(
            report, clock, touched, store=store, config=config, embedder=embedder, llm=llm, progress=progress
        )
    if llm is not None:
        calls, hits = llm.calls - calls_before[0], llm.cache_hits - calls_before[1]
        report = replace(report, llm_calls=calls, llm_cache_hits=hits)
    return _finish(report, clock, store)


def _ingest_changed(
    report: IngestReport,
    clock: _StageClock,
    changed: list[LoadedDocument],
    *,
    config: AgragConfig,
    store: KnowledgeStore,
    journal: SqlitePhaseJournal,
    embedder: SentenceTransformersTextEmbedder,
    llm: OpenAIChatClient | None,
    hashes: PhaseHashes,
    progress: bool,
) -> IngestReport:
    """Chunk, extract, prune, resolve, embed and write the new or changed document versions."""
    ingest = config.ingest
    chunked = clock.run("chunk", lambda: tasks.chunk_documents(_as_is(changed), ingest, Phase(journal, hashes.chunk)))
    chunks = chunked.value
    extracted = clock.run(
        "extract",
        lambda: tasks.extract_entities(
            _as_is(changed),
            _as_is(chunks),
            ingest,
            _as_is(llm),
            phase=Phase(journal, hashes.extract),
            progress=progress,
        ),
    )
    raw, extraction_failures = extracted.value.extraction, extracted.value.failures
    kept, pruned = clock.run("prune", lambda: tasks.prune_to_ontology(_as_is(raw), ingest))
    resolved = clock.run(
        "resolve",
        lambda: tasks.resolve_entities(
            _as_is(changed),
            _as_is(kept),
            ingest.resolution,
            store,
            embedder,
            llm=_as_is(llm),
            phase=Phase(journal, hashes.resolve),
        ),
    )
    resolution = resolved.value
    extraction = resolution.extraction
    merged = {d.member_id for d in resolution.decisions if d.decision == MERGED}
    known = store.entities.existing_ids([e.id for e in extraction.entities])
    new_entities = [e for e in extraction.entities if e.id not in known]
    embedded = clock.run(
        "embed",
        lambda: tasks.embed(
            _as_is(changed), _as_is(chunks), _as_is(new_entities), merged, embedder, phase=Phase(journal, hashes.embed)
        ),
    )
    written = clock.run(
        "write",
        lambda: tasks.write_stores(
            store,
            _as_is(changed),
            _as_is(chunks),
            _as_is(resolution),
            _as_is(embedded.value),
            phase=Phase(journal, hashes.resolve),
        ),
    )
    reused = {
        "chunk": chunked.reused,
        "extract": extracted.reused,
        "resolve": resolved.reused,
        "embed": embedded.reused,
    }
    return replace(
        report,
        chunks_written=len(chunks),
        chunks_by_kind=dict(Counter(c.kind for c in chunks)),
        chunks_superseded=written.superseded,
        entities_removed=written.entities_removed,
        extraction_failures=tuple(extraction_failures),
        entities_found=len(extraction.entities),
        entities_new=len(new_entities),
        relations_found=len(extraction.relations),
        pruned=pruned,
        merges=len(merged),
        kept_apart=sum(d.decision == KEPT_APART for d in resolution.decisions),
        candidates=len(resolution.candidates),
        documents_resumed={phase: n for phase, n in reused.items() if n},
        llm_estimate=extracted.value.estimate,
    )


def _communities(
    report: IngestReport,
    clock: _StageClock,
    touched: frozenset[str],
    *,
    store: KnowledgeStore,
    config: AgragConfig,
    embedder: SentenceTransformersTextEmbedder,
    llm: OpenAIChatClient | None,
    progress: bool,
) -> IngestReport:
    settings = config.ingest.communities
    communities = clock.run("communities", lambda: tasks.detect_communities(store, settings))
    report_llm = llm if reports_use_llm(settings, llm) else None
    outcome = clock.run(
        "reports",
        lambda: tasks.write_reports(
            store, _as_is(communities), settings, _as_is(report_llm), embedder, touched=touched, progress=progress
        ),
    )
    return replace(
        report,
        communities_by_level=dict(sorted(Counter(c.level for c in communities).items())),
        reports_by_method=outcome.by_method,
        reports_reused=outcome.reused,
        report_fallbacks=outcome.fallbacks,
    )


def _other_settings(
    documents: list[LoadedDocument], changed: list[LoadedDocument], store: KnowledgeStore, current: str
) -> tuple[str, ...]:
    """The unchanged files that were ingested with other settings (chunker, extractor, ontology or resolution)."""
    changed_ids = {d.document.id for d in changed}
    unchanged = [d.document for d in documents if d.document.id not in changed_ids]
    recorded = store.graph.document_config_hashes([d.id for d in unchanged])
    return tuple(sorted(d.source_path for d in unchanged if recorded.get(d.id, "") not in ("", current)))


def _file_statuses(
    documents: list[LoadedDocument], changed: list[LoadedDocument], failures: list[FileFailure]
) -> tuple[FileStatus, ...]:
    changed_paths = {d.document.source_path for d in changed}
    statuses = [
        FileStatus(d.document.source_path, INGESTED if d.document.source_path in changed_paths else UNCHANGED)
        for d in documents
    ]
    statuses += [FileStatus(f.source_path, FAILED, f.reason) for f in failures]
    return tuple(sorted(statuses, key=lambda s: s.source_path))


def _finish(report: IngestReport, clock: _StageClock, store: KnowledgeStore) -> IngestReport:
    return replace(report, stage_seconds=dict(clock.seconds), counts=store.counts())


@flow(name="agrag-ingest")
def ingest_flow(
    folder: str,
    overrides: Sequence[str] = (),
    progress_bar: bool = False,
    data_dir: str | None = None,
    embedding_cache_dir: str | None = None,
) -> IngestReport:
    """Ingest ``folder`` into the data dir of ``AGRAG_DATA_DIR`` (or ``data_dir``).

    Args:
        folder: A folder of documents (.txt, .md, .rst, .html, .pdf, .csv); inside ``AGRAG_FILES_ROOT`` if set.
        overrides: Hydra overrides, for example ``["ingest.chunker.max_chars=800"]``.
        progress_bar: Show progress bars for embedding and LLM extraction.
        data_dir: Ingest into this data dir instead of ``AGRAG_DATA_DIR``.
        embedding_cache_dir: Keep embeddings here instead of ``AGRAG_EMBEDDING_CACHE_DIR``.

    Returns:
        What the run did, stage by stage.
    """
    config = load_config(list(overrides))
    settings = load_agrag_settings()
    chosen = {"data_dir": data_dir, "embedding_cache_dir": embedding_cache_dir}
    settings = settings.model_copy(update={k: Path(v) for k, v in chosen.items() if v is not None})
    root = str(resolve_ingest_folder(folder, settings.files_root))
    llm = llm_client(settings)
    check_llm_needs(config.ingest, llm)
    embedder = SentenceTransformersTextEmbedder(
        config.embedder.model,
        config.embedder.device,
        config.embedder.batch_size,
        progress_bar=progress_bar,
        cache=open_embedding_cache(settings, config.embedder),
    )
    with open_knowledge_store(settings, config.vector_store, embedder, load_retrieval_settings()) as store:
        return ingest_into(root, config, store, embedder, llm=llm, progress=progress_bar)
