"""The delete flow: take one document's contribution out of the graph, keeping its text readable by id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from prefect import flow
from prefect.client.schemas.objects import State
from prefect.states import Completed

from agrag.components.data_models.ingestion_run import RunKind
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AgragError, DocumentNotFoundError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows import community_tasks
from agrag.flows.community_refresh import refresh_communities
from agrag.flows.run_context import current_run, requester, tracked_run
from agrag.flows.run_inputs import check_overrides, run_settings
from agrag.flows.run_outcome import ended, failed_state, quiet_engine_tracebacks, record
from agrag.pipelines.config_models import AgragConfig
from agrag.pipelines.runtime import Runtime, check_ingested, runtime_for


@dataclass(frozen=True, slots=True)
class DeleteReport:
    """What deleting one document did.

    Attributes:
        document_id: The document deleted.
        chunks_retired: Its chunks, of every version (still readable by id, marked superseded).
        entities_removed: Entities no other document supports, now out of the graph and out of search.
        communities: Communities after the hierarchy was recomputed.
    """

    document_id: str
    chunks_retired: int
    entities_removed: int
    communities: int


def delete_from(
    document_id: str,
    config: AgragConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    llm: OpenAIChatClient | None = None,
) -> DeleteReport:
    """Delete ``document_id`` from open stores, keeping its text readable by id.

    Its support of relations, the entities only it supported and their community memberships go; the communities
    are recomputed, and only those around what it touched get new reports. Deleting again completes a delete that
    was killed half-way. The delete is one commit (``store.committing()``: searches in the same process wait for it,
    then no longer see the document; killed, it leaves the document as it was or deleted, never half); the
    communities are computed outside it and written under the write lock.

    Raises:
        DocumentNotFoundError: no stored document has this id.
    """
    with store.committing() as pending:
        if document_id not in store.graph.document_versions([document_id]):
            raise DocumentNotFoundError(document_id)
        # retired while still current, so what other documents name is told apart; the delete commits last
        retired = store.graph.document_chunk_ids(document_id)
        retirement = store.retire_chunks(retired, pending=pending)
        touched = frozenset(retirement.touched)
        if store.journal is not None:
            touched = community_tasks.mark_communities_stale(store.journal, set(touched))
        store.graph.delete_document(document_id)
    communities = 0
    settings = config.ingest.communities
    if settings.enabled:
        done = refresh_communities(touched, store=store, settings=settings, embedder=embedder, llm=llm)
        communities = done.communities
    return DeleteReport(document_id, len(retired), len(retirement.removed), communities)


def delete_summary(report: DeleteReport) -> str:
    """What a delete did, in one sentence: the CLI's line and the state message of its run."""
    return (
        f"Deleted {report.document_id}: {report.chunks_retired} chunks retired (still readable by id), "
        f"{report.entities_removed} entities no other document supports removed, {report.communities} communities now."
    )


@flow(name="agrag-delete")
def delete_flow(
    document_id: str, overrides: list[str] | None = None, data_dir: str | None = None
) -> State[DeleteReport]:
    """Delete one document from the data dir of ``AGRAG_DATA_DIR`` (or ``data_dir``); see ``delete_from``.

    Ends Completed with what it did, or Failed with agrag's message; ``run_delete`` returns the report or raises.
    """
    quiet_engine_tracebacks()
    source, outer = requester(), current_run()
    try:
        settings = run_settings(data_dir, None, source)
        check_ingested(settings.agrag)
        check_overrides(overrides or [], settings, source)
        with (
            runtime_for(overrides or [], settings) as runtime,
            tracked_run(runtime.runs, RunKind.DELETE, document_id, overrides or []) as run,
        ):
            return ended(run, lambda: _delete_run(document_id, overrides or [], runtime))
    except AgragError as exc:  # before the run was recorded: a bad override or data dir, a locked data dir
        return record(outer, failed_state(exc))


def _delete_run(document_id: str, overrides: list[str], runtime: Runtime) -> tuple[State[DeleteReport], DeleteReport]:
    config = runtime.config_for(overrides)
    report = delete_from(document_id, config, runtime.store, runtime.embedder, runtime.llm)
    return Completed(data=report, message=delete_summary(report)), report


def run_delete(document_id: str, overrides: list[str] | None = None, data_dir: str | None = None) -> DeleteReport:
    """Call ``delete_flow`` and return its report, or raise the error it ended with (an ``AgragError``)."""
    final = delete_flow(document_id, overrides, data_dir, return_state=True)
    # the flow returns its final state, which Prefect makes the run's state: the typed result is one level down
    return cast("State[DeleteReport]", final).result()
