"""The ingestion flow: a folder of documents into the graph and vector stores."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar, cast

from prefect import flow
from prefect.client.schemas.objects import State

from agrag.components.data_models.ingestion_run import RunKind
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.phase_key import document_subject
from agrag.components.disk_space_errors import NOTHING_CHANGED
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AgragError, StoreError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.flows import community_tasks, plan_groups, write_tasks
from agrag.flows import ingest_tasks as tasks
from agrag.flows.community_refresh import refresh_communities
from agrag.flows.extract_resolve import extract_and_resolve
from agrag.flows.fact_points import extraction_facts
from agrag.flows.file_statuses import file_statuses, other_settings, with_plans, without_text
from agrag.flows.finalize_flow import DEFERRED
from agrag.flows.index_task import index_vectors
from agrag.flows.ingest_control import IngestControl
from agrag.flows.ingest_report import IngestReport
from agrag.flows.ingest_report_markdown import publish_ingest_report
from agrag.flows.plan_groups import expected_hashes
from agrag.flows.run_context import RunContext, current_run, requester, tracked_run
from agrag.flows.run_inputs import check_overrides, run_folder, run_settings
from agrag.flows.run_outcome import ended, failed_state, ingest_state, quiet_engine_tracebacks, record
from agrag.flows.source_folders import claim_documents
from agrag.flows.stage_clock import StageClock, as_is
from agrag.pipelines.config_models import AgragConfig
from agrag.pipelines.ingest_components import check_llm_needs
from agrag.pipelines.ontology_base import remember
from agrag.pipelines.ontology_in_force import in_force
from agrag.pipelines.plan_models import FinalizePolicy
from agrag.pipelines.runtime import Runtime, runtime_for
from agrag.pipelines.store_status import record_ontology

T = TypeVar("T")


CHANGED_STAGES = ("chunk", "extract", "prune", "resolve", "embed", "write")
COMMUNITY_STAGES = ("communities", "reports")


def ingest_into(
    folder: str,
    config: AgragConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    *,
    llm: OpenAIChatClient | None = None,
    progress: bool = False,
    control: IngestControl | None = None,
    files_root: Path | None = None,
    files: Sequence[str] | None = None,
    dask_address: str | None = None,
) -> IngestReport:
    """Run every stage on ``folder`` (or only ``files`` of it) against open stores; unchanged documents are skipped.

    Each phase journals what it finished (per document version and configuration hash) in the store's phase
    journal, so a run that was killed, started again with the same files and settings, redoes only unfinished work.
    Only the store writes hold ``store.writing()``, in commit batches of whole documents (``ingest.write_batch_chunks``
    chunks each), so searches in the same process go on between batches and see only committed documents.

    Args:
        folder: The folder of documents.
        config: The composed configuration.
        store: Open stores with a phase journal.
        embedder: The data dir's embedding model.
        llm: The LLM endpoint, when the configuration uses one.
        progress: Show progress bars.
        control: Checked at every safe point (between stages, commit batches, embedding slices and LLM extraction
            batches) and told as each stage starts and ends; None runs to the end and tells nobody.
        files_root: ``AGRAG_FILES_ROOT``: document ids are paths relative to it (else absolute paths).
        files: Only these files of ``folder`` (POSIX paths relative to it); None: the whole folder. The folder's
            other documents are left as they are; the chosen ones get the ids a whole-folder run gives them.
        dask_address: ``AGRAG_DASK_ADDRESS``: the Dask scheduler whose workers embed when ``ingest.parallel`` fans
            the embed stage out (None: a local cluster).

    Raises:
        DocumentsOfOtherFolderError: files would supersede documents that may be another folder's (raised before
            any write; ``ingest.supersede_other_folders=true`` allows it).
        LLMNotConfiguredError: the configuration needs an LLM and ``llm`` is None (raised before any work).
        StoreError: ``store`` was opened without a phase journal.
        IngestInterruptedError: ``control`` was cancelled; the next run resumes from the phase markers.
        NoSpaceLeftError: the data dir's disk has less than ``AGRAG_MIN_FREE_MB`` free (checked before anything), or
            less than a stage will write (checked before that stage).
    """
    store.require_room(0, f"ingest {folder}", NOTHING_CHANGED)
    remember(config.ingest.ontology, store)  # the data dir keeps the ontology it was built with in force
    config = in_force(config, store)  # the configured ontology plus what set_ontology added to this data dir
    check_llm_needs(config.ingest, llm)
    if store.journal is None:
        raise StoreError("Ingestion needs the store's phase journal; open the store with open_knowledge_store.")
    journal = store.journal
    llm_model = llm.model if llm is not None else None
    calls_before = (llm.calls, llm.cache_hits) if llm is not None else (0, 0)
    clock = StageClock(control)
    documents, failures = clock.run("load", lambda: tasks.load_documents(folder, config.ingest, files_root, files))
    clock.completed("load", IngestReport(folder, len(documents), 0, 0, tuple(failures)))
    claimed = claim_documents(folder, documents, store.graph, supersede=config.ingest.supersede_other_folders)
    documents = claimed.documents
    if claimed.adopted:  # documents stored before folders were recorded: now they are this folder's
        with store.writing():
            store.graph.record_source_folders(claimed.adopted)
    changed = clock.run("select-changed", lambda: tasks.select_changed(as_is(documents), store))
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
        files=file_statuses(documents, changed, failures),
        other_settings=other_settings(documents, changed, store, expected_hashes(documents, config, llm_model)),
    )
    clock.completed("select-changed", report)
    ingest = config.ingest
    if not changed:
        clock.skipped(CHANGED_STAGES, "no new or changed documents")
    else:
        report = _ingest_changed(
            report,
            clock,
            changed,
            config=config,
            store=store,
            journal=journal,
            embedder=embedder,
            llm=llm,
            progress=progress,
            dask_address=dask_address,
        )
    touched = community_tasks.stale_communities(journal)
    if ingest.communities.enabled and touched is not None and ingest.finalize is FinalizePolicy.MANUAL:
        clock.skipped(COMMUNITY_STAGES, DEFERRED)
        report = replace(report, communities_deferred=True)
    elif ingest.communities.enabled and touched is not None:  # also when a killed run left them stale
        done = refresh_communities(
            touched,
            store=store,
            settings=ingest.communities,
            embedder=embedder,
            llm=llm,
            progress=progress,
            clock=clock,
            report=report,
        )
        report = done.into(report)
    elif not ingest.communities.enabled:
        clock.skipped(COMMUNITY_STAGES, "communities are off (ingest.communities.enabled=false)")
    else:
        clock.skipped(COMMUNITY_STAGES, "the graph did not change since the communities were last made")
    if llm is not None:
        calls, hits = llm.calls - calls_before[0], llm.cache_hits - calls_before[1]
        report = replace(report, llm_calls=calls, llm_cache_hits=hits)
    if changed:  # what `status` shows the graph was built with (an unchanged rerun built nothing)
        with store.writing():
            record_ontology(store.graph, ingest.ontology)
    indexed = index_vectors(store, clock)
    if indexed is not None:
        report = replace(report, vectors_indexed=indexed)
    return _finish(report, clock, store)


def _ingest_changed(
    report: IngestReport,
    clock: StageClock,
    changed: list[LoadedDocument],
    *,
    config: AgragConfig,
    store: KnowledgeStore,
    journal: SqlitePhaseJournal,
    embedder: SentenceTransformersTextEmbedder,
    llm: OpenAIChatClient | None,
    progress: bool,
    dask_address: str | None,
) -> IngestReport:
    """Chunk, extract, prune, resolve, embed and write the new or changed document versions, each by its plan.

    Chunk, extract and embed run per plan group (``flows/plan_groups.py``); prune and resolve once over the batch.
    Everything but the write runs without ``store.writing()``; the write holds it per commit batch.
    """
    ingest = config.ingest
    model = llm.model if llm is not None else None
    control = clock.control
    if control is not None:  # what a stopped run says it committed
        control.to_commit(len(changed))
    plans = plan_groups.plans_of(changed, ingest)
    groups = plan_groups.grouped(changed, plans, config, model)
    chunked = clock.run("chunk", lambda: plan_groups.chunk_groups(changed, groups, journal))
    refused = plan_groups.over_chunk_limit(chunked.value, plans, ingest.plan.limits.max_chunks_per_file)
    chunked_documents = changed
    changed = [d for d in changed if d.document.id not in refused]
    chunks = [c for c in chunked.value if c.document_id not in refused]
    if control is not None:
        control.to_commit(len(changed))
    plans = plan_groups.within_llm_budget({d.document.id: plans[d.document.id] for d in changed}, chunks, ingest, llm)
    resolution, plans = plan_groups.resolution_of(plans, ingest)
    groups = plan_groups.grouped(changed, plans, config, model)
    report = with_plans(report, chunked_documents, plans, refused)
    report = replace(
        report,
        chunks_written=len(chunks),
        chunks_by_kind=dict(Counter(str(c.kind) for c in chunks)),
        files=without_text(report.files, changed, chunks),
    )
    clock.completed("chunk", report, final=False)  # how many older chunks are superseded, the write tells
    resolved = extract_and_resolve(
        report,
        clock,
        changed,
        chunks,
        groups=groups,
        resolution=resolution,
        config=config,
        store=store,
        embedder=embedder,
        llm=llm,
        progress=progress,
    )
    report = resolved.report
    embedded = clock.run(
        "embed",
        lambda: plan_groups.embed_groups(
            groups,
            chunks,
            resolved.new_entities,
            resolved.merged,
            embedder,
            facts=extraction_facts(resolved.resolution.extraction, store.graph, {c.id for c in chunks}),
            entity_vectors=store.entities,
            journal=journal,
            control=clock.control,
            parallel=ingest.parallel,
            dask_address=dask_address,
        ),
    )
    report = replace(report, embedded_on=embedded.value.embedded_on)
    clock.completed("embed", report)
    written = clock.run(
        "write",
        lambda: write_tasks.write_stores(
            store,
            as_is(changed),
            as_is(chunks),
            as_is(resolved.resolution),
            as_is(embedded.value),
            phase=resolved.phase,
            batch_chunks=ingest.write_batch_chunks,
            bulk_min_chunks=ingest.bulk_load_min_chunks,
            control=clock.control,
            document_hashes=plan_groups.committed_hashes(plans, config, model),
            plans={doc_id: plan.applied.to_json() for doc_id, plan in plans.items()},
        ),
    )
    reused = {"chunk": chunked.reused, **resolved.reused, "embed": embedded.reused}
    report = replace(
        report,
        chunks_superseded=written.superseded,
        entities_removed=written.entities_removed,
        documents_resumed={phase: n for phase, n in reused.items() if n},
    )
    clock.completed("write", report)
    return report


def _finish(report: IngestReport, clock: StageClock, store: KnowledgeStore) -> IngestReport:
    return replace(report, stage_seconds=dict(clock.seconds), counts=store.counts())


@flow(name="agrag-ingest")
def ingest_flow(
    folder: str,
    overrides: Sequence[str] = (),
    progress_bar: bool = False,
    data_dir: str | None = None,
    embedding_cache_dir: str | None = None,
    *,
    files: list[str] | None = None,
) -> State[IngestReport]:
    """Ingest ``folder`` into the data dir of ``AGRAG_DATA_DIR`` (or ``data_dir``).

    Inside ``agrag serve`` the run writes through the server's open stores; elsewhere it opens the data dir itself.
    Each stage logs its result line; the run publishes the ingest report as a markdown artifact and ends Completed
    ("Completed with failures" when files could not be read), Failed with agrag's message, or Cancelled. A direct
    call returns the report or raises the original error (``run_ingest`` does that with the right type).

    Args:
        folder: A folder of documents (.txt, .md, .rst, .html, .pdf, .csv); inside ``AGRAG_FILES_ROOT`` if set.
        overrides: Hydra overrides, for example ``["ingest.chunker.max_chars=800"]``.
        progress_bar: Show progress bars for embedding and LLM extraction.
        data_dir: The data dir to write; empty: ``AGRAG_DATA_DIR`` of the process running the flow. A run of
            ``agrag serve``'s deployment must name that server's data dir (the default) or leave it empty.
        embedding_cache_dir: Keep embeddings here instead of ``AGRAG_EMBEDDING_CACHE_DIR``.
        files: Only these files of ``folder`` (paths relative to it, e.g. ``["q3/report.md"]``); empty: all of it.

    Returns:
        The final state; its result is what the run did, stage by stage.
    """
    quiet_engine_tracebacks()
    source, outer = requester(), current_run()
    try:
        settings = run_settings(data_dir, embedding_cache_dir, source)
        root = str(run_folder(folder, settings, source))
        check_overrides(overrides, settings, source)
        with (
            runtime_for(overrides, settings) as runtime,
            tracked_run(runtime.runs, RunKind.INGEST, root, overrides) as run,
        ):
            chosen = list(files) if files else None
            return ended(run, lambda: _ingest_run(root, overrides, progress_bar, runtime, run, files=chosen))
    except AgragError as exc:  # before the run was recorded: a bad folder, data dir or override, a locked data dir
        return record(outer, failed_state(exc))


def _ingest_run(
    root: str,
    overrides: Sequence[str],
    progress_bar: bool,
    runtime: Runtime,
    run: RunContext,
    *,
    files: list[str] | None,
) -> tuple[State[IngestReport], IngestReport]:
    """Ingest ``root`` with the runtime's stores under the run's control; publish the report; the final state."""
    config = runtime.config_for(overrides)
    check_llm_needs(config.ingest, runtime.llm)
    embedder = runtime.ingest_embedder(progress_bar)
    report = ingest_into(
        root,
        config,
        runtime.store,
        embedder,
        llm=runtime.llm,
        progress=progress_bar,
        control=run.control,
        files_root=runtime.settings.agrag.files_root,
        files=files,
        dask_address=runtime.settings.agrag.dask_address,
    )
    publish_ingest_report(report, str(runtime.data_dir))
    return ingest_state(report), report


def run_ingest(
    folder: str,
    overrides: Sequence[str] = (),
    *,
    progress_bar: bool = False,
    data_dir: str | None = None,
    embedding_cache_dir: str | None = None,
    files: Sequence[str] | None = None,
) -> IngestReport:
    """Call ``ingest_flow`` and return its report, or raise the error it ended with (an ``AgragError``).

    Raises:
        AgragError: the run failed, was refused or was stopped (``IngestInterruptedError``).
    """
    final = ingest_flow(
        folder,
        overrides,
        progress_bar=progress_bar,
        data_dir=data_dir,
        embedding_cache_dir=embedding_cache_dir,
        files=list(files) if files else None,
        return_state=True,
    )
    # the flow returns its final state, which Prefect makes the run's state: the typed result is one level down
    return cast("State[IngestReport]", final).result()
