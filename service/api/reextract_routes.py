"""``POST /v1/reextractions``: queue a re-extraction in place, followed like an ingestion (``/v1/ingestions/{id}``)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from agrag.components.data_models.ingestion_run import IngestionRun, RunSource
from agrag.flows.reextract_flow import check_request
from agrag.pipelines.document_ids import check_documents_known
from agrag.pipelines.ingest_components import check_llm_needs
from agrag.service.api.admin_routes import MAX_OVERRIDES, ClientSource
from agrag.service.api.dependencies import AdminCaller, Queue, State
from agrag.service.api.errors import ERROR_RESPONSES

MAX_DOCUMENTS = 10_000


class ReextractRequest(BaseModel):
    """The body of ``POST /v1/reextractions``: document ids, or ``other_settings``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    document_ids: tuple[str, ...] = Field(
        (), max_length=MAX_DOCUMENTS, description="The documents to re-extract (ids as GET /v1/documents lists them)."
    )
    other_settings: bool = Field(
        False, description="Instead of ids: every document ingested under other settings than the current ones."
    )
    force: bool = Field(False, description="Re-extract named documents even when their settings did not change.")
    overrides: tuple[str, ...] = Field(
        (), max_length=MAX_OVERRIDES, description="Hydra overrides of the run, e.g. ['ingest/extractor=llm']."
    )
    source: ClientSource = Field(
        RunSource.HTTP, description="Who asks: `cli` when the agrag CLI sends its command to the server."
    )


def reextract_routes() -> APIRouter:
    """The route that queues re-extractions."""
    router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)

    @router.post("/reextractions", status_code=202, tags=["ingestion"], summary="Re-extract documents in place")
    def start_reextraction(state: State, caller: AdminCaller, queue: Queue, request: ReextractRequest) -> IngestionRun:
        """Queue a re-extraction: the documents' entities, mentions and relations under the current settings.

        Chunks (and so evidence ids) stay. It runs now or after the runs before it, and is followed like an
        ingestion (``GET /v1/ingestions/{id}``); its report has a status per document. Unknown ids, a bad
        override or a missing LLM are refused here, before anything is queued.
        """
        ids = check_request(request.document_ids, request.other_settings)
        check_llm_needs(state.host.config(request.overrides).ingest, state.host.runtime.llm)
        with state.host.runtime.store.reading():
            check_documents_known(state.host.runtime.store.graph, ids)
        return queue.submit_reextract(
            ids or (), request.overrides, request.source, other_settings=request.other_settings, force=request.force
        )

    return router
