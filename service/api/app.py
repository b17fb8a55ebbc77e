"""``create_app``: the FastAPI app of ``agrag serve`` over one open ``Runtime``.

Routes: ``/healthz`` and ``/readyz``; ``/v1/search``, ``/v1/status`` and the evidence sessions (made from the tool
definitions); the admin routes (ingestion, deletion, merges). The OpenAPI page at ``/docs`` (and ReDoc at
``/redoc``) is served with its scripts from the ``fastapi-offline`` package, so it works without a network.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version

from fastapi import FastAPI, Response
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, Field
from starlette.routing import Route

from agrag.pipelines.runtime import Runtime
from agrag.service.api.access import AccessPolicy
from agrag.service.api.admin_routes import admin_routes
from agrag.service.api.allowed_hosts import AllowedHosts, BindAddress
from agrag.service.api.ask_routes import ask_routes
from agrag.service.api.dependencies import ApiState, RunQueue
from agrag.service.api.errors import ErrorBody, NotReadyError, error_response, install_error_handlers
from agrag.service.api.finalize_routes import finalize_routes
from agrag.service.api.middleware import AccessLog, BodyLimit, HostGuard
from agrag.service.api.ontology_routes import ontology_routes
from agrag.service.api.reextract_routes import reextract_routes
from agrag.service.api.secret_mask import SecretMask, settings_secrets
from agrag.service.api.sessions import SessionStore
from agrag.service.api.text_routes import text_routes
from agrag.service.api.tool_routes import tool_routes
from agrag.service.mcp.http import McpHttpEndpoint
from agrag.service.mcp.server import MCP_PATH
from agrag.service.tools.tool import ToolHost

logger = logging.getLogger(__name__)

DESCRIPTION = """Search a knowledge graph built by agrag and read, cite and check its sources.

* **search**: a retrieval recipe (by name or inline), with filters and an optional trace.
* **evidence sessions**: create one (`POST /v1/sessions`), then discover, fetch, navigate, find_entities, explore,
  check_citations and render_citations inside it. Every evidence id names one version of one document.
* **status**: what the data dir holds and the last ingestion.
* **ingestion** (unscoped tokens): start runs over a folder, follow their stages, cancel them, delete documents.
* **agent**: `POST /v1/ask` answers a question with numbered, checked citations, streaming each tool call as it
  happens (needs an LLM with tool calling on the server: `AGRAG_LLM_BASE_URL`).

Send `Authorization: Bearer <token>` with a token of `AGRAG_API_TOKENS` (or the server's local token) unless the
server is open (no tokens configured; loopback only). A token limited to documents sees only those documents in
every call. Errors are `{"error": "<type>", "message": "<one line>"}`.
"""


class Health(BaseModel):
    """The answer of ``/healthz`` and ``/readyz``."""

    status: str = Field(..., description="ok (the process is up) or ready (stores open, model loaded).")


def create_app(
    runtime: Runtime,
    access: AccessPolicy,
    *,
    queue: RunQueue | None = None,
    sessions: SessionStore | None = None,
    warm_up: bool = True,
    started: float | None = None,
    remote: bool = False,
    mcp_writes: bool = False,
    bind: BindAddress | None = None,
) -> FastAPI:
    """The HTTP API over ``runtime``, for the callers ``access`` admits.

    Args:
        runtime: The open data dir (stays open; whoever opened it closes it).
        access: The tokens; see ``AccessPolicy``.
        queue: The ingestion queue of the ingestion routes; without one they answer 503.
        sessions: The evidence sessions; by default a store with the settings' idle time and limit per token.
        warm_up: Load the embedding model and build the default recipe's pipeline when the app starts, in the
            background (``/readyz`` answers 503 until done). Without it the app is ready at once.
        started: ``time.perf_counter()`` when the serving command started, for the "Ready" log line's time.
        remote: Other machines reach this server (a non-loopback host): ingestion then needs ``AGRAG_FILES_ROOT``.
        mcp_writes: Offer the write tools (ingest, delete_document) at /mcp too, to unscoped tokens; needs ``queue``.
        bind: Where the server listens (``--host`` and the port): every request must name it in its Host header,
            or a name of ``AGRAG_ALLOWED_HOSTS`` (``AllowedHosts``). Without it: loopback names on the port the
            request came in on.

    Usage:
        ```python
        app = create_app(runtime, AccessPolicy(load_tokens(runtime.settings.agrag)))
        uvicorn.run(app, host="127.0.0.1", port=8765)
        ```
    """
    settings = runtime.settings.agrag
    state = ApiState(
        host=ToolHost(runtime, None if queue is None else queue.last_finished),
        access=access,
        sessions=sessions
        or SessionStore(runtime.evidence_session, settings.session_idle_minutes, settings.sessions_per_token),
        queue=queue,
        remote=remote,
        mask=SecretMask([*access.secrets(), *settings_secrets(settings)]),
    )
    mcp = McpHttpEndpoint(state.host, access, queue=queue if mcp_writes else None)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if warm_up:
            threading.Thread(target=_warm_up, args=(state, started), name="agrag-warm-up", daemon=True).start()
        else:
            state.ready.set()
        async with mcp.running():
            yield

    app = FastAPIOffline(
        title="agrag",
        description=DESCRIPTION,
        version=f"{version('agrag')} (API v1)",
        lifespan=lifespan,
        swagger_ui_parameters={"defaultModelsExpandDepth": 0, "docExpansion": "list"},
    )
    app.state.agrag = state
    install_error_handlers(app, state.mask)
    # Added innermost first. The Host and Origin check wraps every route, so it is the one rule for all of them
    # (the API, the OpenAPI pages, health, /mcp); the access log, outermost, has a line for its refusals too.
    app.add_middleware(BodyLimit)  # a body too large is refused before any route reads it
    app.add_middleware(HostGuard, allowed=AllowedHosts.for_bind(bind, settings))
    app.add_middleware(AccessLog)
    app.include_router(tool_routes())
    app.include_router(admin_routes())
    app.include_router(reextract_routes())
    app.include_router(finalize_routes())
    app.include_router(ontology_routes())
    app.include_router(ask_routes())
    app.include_router(text_routes())
    app.router.routes.append(Route(MCP_PATH, endpoint=mcp))  # the MCP SDK's streamable HTTP transport

    @app.get("/healthz", tags=["health"], summary="Is the process up")
    async def healthz() -> Health:
        """Answers as long as the process serves requests."""
        return Health(status="ok")

    @app.get("/readyz", tags=["health"], summary="Can it answer queries", responses={503: {"model": ErrorBody}})
    async def readyz() -> Response:
        """Ready once the stores are open and the embedding model is loaded."""
        if not state.ready.is_set():
            return error_response(NotReadyError("The embedding model is still loading; try again in a moment."))
        return JSONResponse(Health(status="ready").model_dump())

    return app


def _warm_up(state: ApiState, since: float | None) -> None:
    """Load the model and build the default recipe's pipeline, so the first request is as fast as the next."""
    runtime = state.host.runtime
    started = time.perf_counter()
    try:
        runtime.embedder.warm_up()
        runtime.engine.pipeline_for(runtime.config.recipe)
    # A recipe that cannot be built here fails again, with its message, on the request that asks for it.
    except Exception:
        logger.exception("Warming up the default recipe failed")
    state.ready.set()
    # The stores load the model when they open (the vectors' dimension), before this thread: time the whole start.
    elapsed = time.perf_counter() - (started if since is None else since)
    logger.info("Ready %.1f s after start (stores open, model loaded)", elapsed)
