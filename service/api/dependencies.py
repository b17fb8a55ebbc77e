"""What the routes share: the app's state, who the caller is, and the ingestion queue's interface."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Protocol

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from agrag.components.data_models.ingestion_run import IngestionRun, RunSource
from agrag.service.api.access import AccessPolicy, Caller
from agrag.service.api.errors import ForbiddenError, NotReadyError
from agrag.service.api.secret_mask import SecretMask
from agrag.service.api.sessions import SessionStore
from agrag.service.tools.tool import ToolHost


class RunQueue(Protocol):
    """The ingestion queue as the routes use it (``service/server/ingestion_queue.py: IngestionQueue``)."""

    def submit_ingest(
        self, folder: str, overrides: Sequence[str], source: RunSource, files: Sequence[str] = ()
    ) -> IngestionRun:
        """Queue an ingestion of ``folder`` (only ``files`` of it, if given); the message says if it runs now."""
        ...

    def submit_delete(self, document_id: str, overrides: Sequence[str], source: RunSource) -> IngestionRun:
        """Queue the deletion of a document."""
        ...

    def submit_reextract(
        self,
        document_ids: Sequence[str],
        overrides: Sequence[str],
        source: RunSource,
        *,
        other_settings: bool = False,
        force: bool = False,
    ) -> IngestionRun:
        """Queue the re-extraction of documents (or of every document ingested under other settings)."""
        ...

    def submit_finalize(self, overrides: Sequence[str], source: RunSource) -> IngestionRun:
        """Queue a rebuild of the communities and reports that manual ingestions left stale."""
        ...

    def get(self, run_id: str) -> IngestionRun:
        """One run (``RunNotFoundError`` if unknown)."""
        ...

    def runs(self, limit: int = 50) -> list[IngestionRun]:
        """The runs, newest first."""
        ...

    def cancel(self, run_id: str) -> IngestionRun:
        """Cancel a queued or running run."""
        ...

    def last_finished(self) -> IngestionRun | None:
        """The last run that ended."""
        ...


@dataclass
class ApiState:
    """Everything the routes of one app work with.

    Attributes:
        host: The runtime and the last ingestion, as the tools see them.
        access: The tokens.
        sessions: The open evidence sessions.
        queue: The ingestion queue; None where this process runs no ingestion.
        ready: Set once the embedding model is loaded (``/readyz``).
        remote: The server listens where other machines reach it; then ingestion reads only below
            ``AGRAG_FILES_ROOT``, never any folder of the server's disk.
        mask: Hides the server's secrets in every error text it sends.
    """

    host: ToolHost
    access: AccessPolicy
    sessions: SessionStore
    queue: RunQueue | None = None
    remote: bool = False
    ready: threading.Event = field(default_factory=threading.Event)
    mask: SecretMask = field(default_factory=SecretMask)


async def api_state(request: Request) -> ApiState:
    """The state of the app serving ``request``."""
    state: ApiState = request.app.state.agrag
    return state


_BEARER = HTTPBearer(
    auto_error=False,
    description="A token of AGRAG_API_TOKENS (or the server's local token from its server file). Not needed on an "
    "open server (no tokens configured, loopback host only).",
)


async def current_caller(
    request: Request,
    state: Annotated[ApiState, Depends(api_state)],
    _: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
) -> Caller:
    """The caller of the request (the bearer scheme is declared for the OpenAPI page; the header is read here).

    Raises:
        AuthenticationError: no token where one is needed, or a wrong one.
    """
    caller = state.access.authenticate(request.headers.get("authorization"))
    request.state.caller = caller.name  # for the access log line
    return caller


async def admin_caller(caller: Annotated[Caller, Depends(current_caller)]) -> Caller:
    """The caller of an admin route, which must be allowed every document.

    Raises:
        ForbiddenError: the token is limited to some documents.
    """
    if not caller.unscoped:
        raise ForbiddenError(
            f"The token {caller.name!r} is limited to some documents; ingestion, deletion and merges need a token "
            "that may read every document."
        )
    return caller


async def ingestion_queue(state: Annotated[ApiState, Depends(api_state)]) -> RunQueue:
    """The ingestion queue.

    Raises:
        NotReadyError: this process runs no ingestion queue.
    """
    if state.queue is None:
        raise NotReadyError("This server runs no ingestion queue; ingest with `agrag ingest` where no server runs.")
    return state.queue


State = Annotated[ApiState, Depends(api_state)]
CurrentCaller = Annotated[Caller, Depends(current_caller)]
AdminCaller = Annotated[Caller, Depends(admin_caller)]
Queue = Annotated[RunQueue, Depends(ingestion_queue)]
