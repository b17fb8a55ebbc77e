"""The ingestion flow: a folder of documents into the graph and vector stores."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar, cast

from prefect import flow
from prefect.utilities.annotations import quote

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows import ingest_tasks as tasks
from agrag.flows.ingest_report import IngestReport
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.config_models import AgragConfig
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
) -> IngestReport:
    """Run every stage on ``folder`` against open stores; unchanged documents are skipped before any work."""
    clock = _StageClock()
    documents, failures = clock.run("load", lambda: tasks.load_documents(folder, config.ingest))
    changed = clock.run("select-changed", lambda: tasks.select_changed(_as_is(documents), store))
    report = IngestReport(
        folder=folder,
        documents_seen=len(documents),
        documents_ingested=len(changed),
        documents_unchanged=len(documents) - len(changed),
        failures=tuple(failures),
    )
    if not changed:
        return _finish(report, clock, store)
    chunks = clock.run("chunk", lambda: tasks.chunk_documents(_as_is(changed), config.ingest))
    raw = clock.run("extract", lambda: tasks.extract_entities(_as_is(chunks), config.ingest))
    extraction = clock.run("resolve", lambda: tasks.resolve_entities(_as_is(raw)))
    known = store.entities.existing_ids([e.id for e in extraction.entities])
    new_entities = [e for e in extraction.entities if e.id not in known]
    points = clock.run("embed", lambda: tasks.embed(_as_is(chunks), _as_is(new_entities), embedder))
    superseded = clock.run(
        "write", lambda: tasks.write_stores(store, _as_is(changed), _as_is(chunks), _as_is(extraction), _as_is(points))
    )
    report = replace(
        report,
        chunks_written=len(chunks),
        chunks_superseded=superseded,
        entities_found=len(extraction.entities),
        entities_new=len(new_entities),
        relations_found=len(extraction.relations),
    )
    return _finish(report, clock, store)


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
        folder: A folder of ``.md``/``.txt`` files.
        overrides: Hydra overrides, for example ``["ingest.chunker.max_chars=800"]``.
        progress_bar: Show a progress bar while embedding.
        data_dir: Ingest into this data dir instead of ``AGRAG_DATA_DIR``.
        embedding_cache_dir: Keep embeddings here instead of ``AGRAG_EMBEDDING_CACHE_DIR``.

    Returns:
        What the run did, stage by stage.
    """
    config = load_config(list(overrides))
    settings = load_agrag_settings()
    chosen = {"data_dir": data_dir, "embedding_cache_dir": embedding_cache_dir}
    settings = settings.model_copy(update={k: Path(v) for k, v in chosen.items() if v is not None})
    embedder = SentenceTransformersTextEmbedder(
        config.embedder.model,
        config.embedder.device,
        config.embedder.batch_size,
        progress_bar=progress_bar,
        cache=open_embedding_cache(settings, config.embedder),
    )
    with open_knowledge_store(settings, config.vector_store, embedder, load_retrieval_settings()) as store:
        return ingest_into(folder, config, store, embedder)
