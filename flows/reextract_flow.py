"""The re-extraction flow: documents' entities, mentions and relations extracted again in place, chunks untouched."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import cast

from prefect import flow
from prefect.client.schemas.objects import State
from prefect.states import Completed

from agrag.components.data_models.ingestion_run import RunKind
from agrag.components.data_models.stored_document import StoredDocument
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AgragError, StoreError
from agrag.components.extractors.reextract_errors import ReextractRequestError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows import community_tasks
from agrag.flows.community_refresh import refresh_communities
from agrag.flows.ingest_control import IngestControl, checkpoint
from agrag.flows.reextract_report import ReextractReport, ReextractStatus, reextract_summary
from agrag.flows.reextract_tasks import PHASES, SettingsOf, check_budget, reextract_document, select_documents
from agrag.flows.run_context import current_run, requester, tracked_run
from agrag.flows.run_inputs import check_overrides, run_settings
from agrag.flows.run_outcome import COMPLETED_WITH_FAILURES, ended, failed_state, quiet_engine_tracebacks, record
from agrag.flows.stage_clock import as_is
from agrag.pipelines.config_models import AgragConfig, IngestConfig
from agrag.pipelines.ingest_components import PhaseHashes, check_llm_needs, phase_hashes
from agrag.pipelines.ingest_plans import plan_for
from agrag.pipelines.ontology_in_force import in_force
from agrag.pipelines.plan_models import FinalizePolicy
from agrag.pipelines.runtime import Runtime, check_ingested, runtime_for
from agrag.pipelines.store_status import record_ontology

OTHER_SETTINGS_TARGET = "documents ingested under other settings"
DEFERRED = "communities: deferred (ingest.finalize=manual), run `agrag finalize`"


def reextract_into(
    document_ids: Sequence[str] | None,
    config: AgragConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    *,
    llm: OpenAIChatClient | None = None,
    force: bool = False,
    progress: bool = False,
    control: IngestControl | None = None,
) -> ReextractReport:
    """Re-extract documents in place against open stores: chunks stay, their entities, mentions and relations change.

    Extraction, pruning and resolution run again on each document's stored current chunks under ``config`` (and
    the ontology in force in the data dir, when one is stored); its links are replaced, merge decisions about
    entities stored before stand (an undone merge stays undone), only entities without vectors are embedded,
    entities no document names any more are removed, the document records the new settings hash, and the
    communities around what changed get new reports. Every step is journaled per document: a run killed at any
    point and started again ends with the graph an uninterrupted run makes.

    Args:
        document_ids: The documents; None: every document whose recorded settings differ from the current ones.
        config: The composed configuration.
        store: Open stores with a phase journal.
        embedder: The data dir's embedding model.
        llm: The LLM endpoint, when the configuration uses one.
        force: Re-extract named documents even when they were extracted under the current settings.
        progress: Show progress bars.
        control: Checked between documents; None runs to the end.

    Raises:
        UnknownDocumentIdError: a named id is no stored document (before any work).
        LLMNotConfiguredError: the configuration needs an LLM and ``llm`` is None (before any work).
        LLMBudgetError: the LLM extraction is estimated over ``ingest.max_llm_calls`` (before any call).
        IngestInterruptedError: ``control`` was cancelled; the same command resumes.
    """
    if store.journal is None:
        raise StoreError("Re-extraction needs the store's phase journal; open the store with open_knowledge_store.")
    journal = store.journal
    config = in_force(config, store)  # the configured ontology plus what set_ontology added to this data dir
    check_llm_needs(config.ingest, llm)
    settings_of = _settings_of(config, _model(llm))
    calls_before = (llm.calls, llm.cache_hits) if llm is not None else (0, 0)
    asked = list(document_ids) if document_ids is not None else None
    selection = select_documents(store, asked, settings_of, force=force)
    check_budget(selection.targets, llm, journal)
    outcomes = list(selection.unchanged)
    for target in selection.targets:
        checkpoint(control)
        named = reextract_document.with_options(task_run_name=f"reextract {target.document_id}")
        outcomes.append(named(as_is(target), store, embedder, as_is(llm), progress=progress))
    report = ReextractReport(documents=tuple(outcomes), config_hash=phase_hashes(config, _model(llm)).resolve)
    touched = community_tasks.stale_communities(journal)
    settings = config.ingest.communities
    if config.ingest.finalize is FinalizePolicy.MANUAL and touched is not None:
        report = replace(report, notes=(*report.notes, DEFERRED))
    elif settings.enabled and touched is not None:  # also when a killed run left them stale
        checkpoint(control)
        done = refresh_communities(
            touched, store=store, settings=settings, embedder=embedder, llm=llm, progress=progress
        )
        report = replace(report, communities_by_level=done.communities_by_level)
    if report.with_status(ReextractStatus.REEXTRACTED):
        with store.writing():
            record_ontology(store.graph, config.ingest.ontology)
    for phase in PHASES:  # every document is committed (one a killed run committed too): its markers can go
        journal.forget(selection.subjects, phase)
    if llm is not None:
        report = replace(report, llm_calls=llm.calls - calls_before[0], llm_cache_hits=llm.cache_hits - calls_before[1])
    return replace(report, counts=store.counts())


def _model(llm: OpenAIChatClient | None) -> str | None:
    return llm.model if llm is not None else None


def _settings_of(config: AgragConfig, model: str | None) -> SettingsOf:
    """Each document's ingestion settings and their hashes: its per-file plan (``plan_for`` its source path)."""
    cache: dict[str, tuple[IngestConfig, PhaseHashes]] = {}

    def settings_of(document: StoredDocument) -> tuple[IngestConfig, PhaseHashes]:
        ingest = plan_for(document.source_path, config.ingest).ingest
        key = ingest.model_dump_json()
        if key not in cache:  # hashed as the ingest flow hashes what it commits a document with
            cache[key] = (ingest, phase_hashes(config.model_copy(update={"ingest": ingest}), model))
        return cache[key]

    return settings_of


@flow(name="agrag-reextract")
def reextract_flow(
    document_ids: list[str] | None = None,
    overrides: Sequence[str] = (),
    other_settings: bool = False,
    force: bool = False,
    *,
    progress_bar: bool = False,
    data_dir: str | None = None,
) -> State[ReextractReport]:
    """Re-extract documents of the data dir of ``AGRAG_DATA_DIR`` (or ``data_dir``) in place; see ``reextract_into``.

    Ends Completed with a line per document ("Completed with failures" when some failed), Failed with agrag's
    message, or Cancelled; ``run_reextract`` returns the report or raises.

    Args:
        document_ids: The documents' ids (as ``agrag documents`` lists them).
        overrides: Hydra overrides, for example ``["ingest/extractor=llm"]``.
        other_settings: Instead of ids: every document ingested under other settings than these.
        force: Re-extract named documents even when their settings did not change.
        progress_bar: Show progress bars.
        data_dir: The data dir; empty: ``AGRAG_DATA_DIR`` of the process running the flow.
    """
    quiet_engine_tracebacks()
    source, outer = requester(), current_run()
    try:
        ids = check_request(document_ids, other_settings)
        settings = run_settings(data_dir, None, source)
        check_ingested(settings.agrag)
        check_overrides(overrides, settings, source)
        target = ", ".join(ids) if ids is not None else OTHER_SETTINGS_TARGET
        with (
            runtime_for(overrides, settings) as runtime,
            tracked_run(runtime.runs, RunKind.REEXTRACT, target, overrides) as run,
        ):
            control = run.control
            return ended(
                run, lambda: _reextract_run(ids, overrides, runtime, control, force=force, progress_bar=progress_bar)
            )
    except AgragError as exc:  # before the run was recorded: a bad request, override or data dir, a locked data dir
        return record(outer, failed_state(exc))


def check_request(document_ids: Sequence[str] | None, other_settings: bool) -> list[str] | None:
    """The ids to re-extract, or None for every document under other settings.

    Raises:
        ReextractRequestError: neither ids nor ``other_settings``, or both.
    """
    ids = [i for i in document_ids or () if i]
    if ids and other_settings:
        raise ReextractRequestError("both document ids and --other-settings were given")
    if not ids and not other_settings:
        raise ReextractRequestError("no document was named")
    return ids or None


def _reextract_run(
    ids: list[str] | None,
    overrides: Sequence[str],
    runtime: Runtime,
    control: IngestControl | None,
    *,
    force: bool,
    progress_bar: bool,
) -> tuple[State[ReextractReport], ReextractReport]:
    config = runtime.config_for(overrides)
    check_llm_needs(config.ingest, runtime.llm)
    embedder = runtime.ingest_embedder(progress_bar)
    report = reextract_into(
        ids, config, runtime.store, embedder, llm=runtime.llm, force=force, progress=progress_bar, control=control
    )
    summary = reextract_summary(report)
    if report.with_status(ReextractStatus.FAILED):
        return Completed(data=report, name=COMPLETED_WITH_FAILURES, message=summary), report
    return Completed(data=report, message=summary), report


def run_reextract(
    document_ids: Sequence[str] | None,
    overrides: Sequence[str] = (),
    other_settings: bool = False,
    force: bool = False,
    *,
    progress_bar: bool = False,
    data_dir: str | None = None,
) -> ReextractReport:
    """Call ``reextract_flow`` and return its report, or raise the error it ended with (an ``AgragError``).

    Usage:
        ```python
        report = run_reextract(["team.md"], ["+ingest.ontology.relation_types.MENTORS=[[Person,Person]]"])
        print(reextract_summary(report))
        ```
    """
    final = reextract_flow(
        list(document_ids) if document_ids else None,
        list(overrides),
        other_settings,
        force,
        progress_bar=progress_bar,
        data_dir=data_dir,
        return_state=True,
    )
    # the flow returns its final state, which Prefect makes the run's state: the typed result is one level down
    return cast("State[ReextractReport]", final).result()
