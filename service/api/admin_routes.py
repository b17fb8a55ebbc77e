"""The admin routes: ingestion runs, deleting a document, the merge log (unscoped tokens); and the configuration."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from agrag.components.data_models.ingestion_run import IngestionRun, RunSource
from agrag.components.data_models.resolution import MergeLogEntry, ResolutionCandidate
from agrag.components.errors import IngestError
from agrag.components.loaders.file_selection import select_in_folder
from agrag.components.loaders.files_root import resolve_ingest_folder
from agrag.pipelines.config_models import AgragConfig
from agrag.pipelines.ingest_components import check_llm_needs
from agrag.service.api.dependencies import AdminCaller, ApiState, CurrentCaller, Queue, State
from agrag.service.api.errors import ERROR_RESPONSES

MAX_OVERRIDES = 50
# Runs a client may start over HTTP say who asked; a Prefect deployment run comes only from Prefect.
ClientSource = Literal[RunSource.HTTP, RunSource.CLI]


MAX_FILE_PATTERNS = 1000


class IngestRequest(BaseModel):
    """The body of ``POST /v1/ingestions``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    folder: str = Field(
        ...,
        min_length=1,
        description="The folder to ingest, on the server's disk: relative to AGRAG_FILES_ROOT when the server sets "
        "it (and then never outside it).",
    )
    overrides: tuple[str, ...] = Field(
        (), max_length=MAX_OVERRIDES, description="Hydra overrides of the run, e.g. ['ingest.chunker.max_chars=800']."
    )
    files: tuple[str, ...] = Field(
        (),
        max_length=MAX_FILE_PATTERNS,
        description="Only these files of the folder: paths or globs relative to it (e.g. ['*.md', 'q3/**/*.csv']), "
        "at most AGRAG_MAX_FILES_PER_CALL files in all. They get the ids a whole-folder ingestion gives them. "
        "Empty: the whole folder.",
    )
    source: ClientSource = Field(
        RunSource.HTTP, description="Who asks: `cli` when the agrag CLI sends its command to the server."
    )


class DeleteRequest(BaseModel):
    """The body of ``POST /v1/documents/{id}/delete``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    overrides: tuple[str, ...] = Field((), max_length=MAX_OVERRIDES, description="Hydra overrides of the run.")
    source: ClientSource = Field(
        RunSource.HTTP, description="Who asks: `cli` when the agrag CLI sends its command to the server."
    )


RunId = Annotated[str, Path(description="The run's id.", max_length=200)]


def read_config(
    state: State,
    caller: CurrentCaller,
    overrides: Annotated[
        list[str] | None,
        Query(
            max_length=MAX_OVERRIDES,
            description="Hydra overrides to compose with, e.g. vector_store=qdrant (repeat the parameter).",
        ),
    ] = None,
) -> AgragConfig:
    """The configuration the server runs with, composed with `overrides` if given.

    The agrag CLI sends here the overrides of a command it runs on the server: a bad override, or one that changes
    what the stores were opened with (vector_store, embedder), is refused with 400 and says why.
    """
    return state.host.config(overrides or ())


def _check_folder(state: ApiState, folder: str) -> None:
    """Refuse a folder the server may not read, before anything is queued."""
    files_root = state.host.runtime.settings.agrag.files_root
    if state.remote and files_root is None:
        raise IngestError(
            "This server listens where other machines reach it, so ingestion reads only below AGRAG_FILES_ROOT, "
            "which is not set. Set AGRAG_FILES_ROOT to the folder of your documents and restart agrag serve."
        )
    resolve_ingest_folder(folder, files_root, RunSource.HTTP)


def _chosen_files(state: ApiState, request: IngestRequest, suffixes: Sequence[str]) -> tuple[str, ...]:
    """The request's ``files`` as files of its folder (none: the whole folder)."""
    if not request.files:
        return ()
    settings = state.host.runtime.settings.agrag
    folder = resolve_ingest_folder(request.folder, settings.files_root, RunSource.HTTP)
    return select_in_folder(request.files, folder, suffixes, settings.max_files_per_call)


def admin_routes() -> APIRouter:
    """The routes of ingestion, deletion and the merge log, and of the configuration."""
    router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)
    router.add_api_route("/config", read_config, methods=["GET"], tags=["config"], summary="Show the configuration")

    @router.post("/ingestions", status_code=202, tags=["ingestion"], summary="Start an ingestion")
    def start_ingestion(state: State, caller: AdminCaller, queue: Queue, request: IngestRequest) -> IngestionRun:
        """Queue an ingestion of a folder: it runs now, or after the runs before it (its message says which).

        Searches and evidence calls keep answering while it runs and see each batch of documents once committed.
        A wrong folder or override is refused here, before anything is queued.
        """
        _check_folder(state, request.folder)
        config = state.host.config(request.overrides)
        check_llm_needs(config.ingest, state.host.runtime.llm)
        chosen = _chosen_files(state, request, config.ingest.loader.suffixes)
        return queue.submit_ingest(request.folder, request.overrides, request.source, chosen)

    @router.get("/ingestions", tags=["ingestion"], summary="List ingestion runs")
    def list_ingestions(
        caller: AdminCaller, queue: Queue, limit: Annotated[int, Query(ge=1, le=500)] = 50
    ) -> list[IngestionRun]:
        """The runs (ingestions and deletions), newest first, with their stage states."""
        return queue.runs(limit)

    @router.get("/ingestions/{run_id}", tags=["ingestion"], summary="Show an ingestion run")
    def read_ingestion(caller: AdminCaller, queue: Queue, run_id: RunId) -> IngestionRun:
        """One run: its state, stages and, once finished, its report."""
        return queue.get(run_id)

    @router.post("/ingestions/{run_id}/cancel", tags=["ingestion"], summary="Cancel an ingestion run")
    def cancel_ingestion(caller: AdminCaller, queue: Queue, run_id: RunId) -> IngestionRun:
        """Cancel a queued run, or stop a running one at its next safe point (committed batches stay)."""
        return queue.cancel(run_id)

    @router.post("/documents/{document_id}/delete", status_code=202, tags=["ingestion"], summary="Delete a document")
    def delete_document(
        state: State,
        caller: AdminCaller,
        queue: Queue,
        document_id: Annotated[str, Path(description="The document's id.", max_length=200)],
        request: DeleteRequest | None = None,
    ) -> IngestionRun:
        """Queue the deletion of a document: what only it supported leaves the graph; its text stays readable."""
        overrides = request.overrides if request is not None else ()
        state.host.config(overrides)
        state.host.runtime.require_document(document_id)
        source = request.source if request is not None else RunSource.HTTP
        return queue.submit_delete(document_id, overrides, source)

    @router.get("/merges", tags=["merges"], summary="List the merge log")
    def list_merges(state: State, caller: AdminCaller) -> list[MergeLogEntry]:
        """Every resolution decision: merges (and undone ones) and homonyms kept apart, with the reason."""
        with state.host.runtime.store.reading():
            return state.host.runtime.store.graph.merge_log()

    @router.get("/merges/candidates", tags=["merges"], summary="List near-miss candidates")
    def list_candidates(state: State, caller: AdminCaller) -> list[ResolutionCandidate]:
        """The near misses entity resolution kept apart, most similar first."""
        with state.host.runtime.store.reading():
            return state.host.runtime.store.graph.candidates()

    @router.post("/merges/{key}/undo", tags=["merges"], summary="Undo a merge")
    def undo_merge(
        state: State, caller: AdminCaller, key: Annotated[str, Path(description="A merge log id or member id.")]
    ) -> list[MergeLogEntry]:
        """Undo a merge: the member becomes an entity of its own again, with its mentions and relations."""
        return state.host.runtime.store.undo_merge(key)  # it writes under the store's write lock

    return router
