"""``POST /v1/finalize``: queue a rebuild of stale communities and reports, followed like an ingestion."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from agrag.components.data_models.ingestion_run import IngestionRun, RunSource
from agrag.pipelines.ingest_components import reports_use_llm
from agrag.service.api.admin_routes import MAX_OVERRIDES, ClientSource
from agrag.service.api.dependencies import AdminCaller, Queue, State
from agrag.service.api.errors import ERROR_RESPONSES


class FinalizeRequest(BaseModel):
    """The body of ``POST /v1/finalize`` (all optional)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    overrides: tuple[str, ...] = Field(
        (),
        max_length=MAX_OVERRIDES,
        description="Hydra overrides of the run, e.g. ['ingest.communities.resolution=2'].",
    )
    source: ClientSource = Field(
        RunSource.HTTP, description="Who asks: `cli` when the agrag CLI sends its command to the server."
    )


def finalize_routes() -> APIRouter:
    """The route that queues a finalize."""
    router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)

    @router.post("/finalize", status_code=202, tags=["ingestion"], summary="Rebuild stale communities and reports")
    def start_finalize(
        state: State, caller: AdminCaller, queue: Queue, request: FinalizeRequest | None = None
    ) -> IngestionRun:
        """Queue a finalize: detect communities and write their reports once, after ``ingest.finalize=manual`` runs.

        It runs now or after the runs before it, and is followed like an ingestion (``GET /v1/ingestions/{id}``);
        its message says what was rebuilt, or that nothing was stale. A bad override, or reports set to ``llm``
        without an LLM, is refused here, before anything is queued.
        """
        asked = request or FinalizeRequest()
        communities = state.host.config(asked.overrides).ingest.communities
        if communities.enabled:
            reports_use_llm(communities, state.host.runtime.llm)
        return queue.submit_finalize(asked.overrides, asked.source)

    return router
