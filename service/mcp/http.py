"""The MCP endpoint of ``agrag serve``: streamable HTTP at ``/mcp``, with the API's tokens, scopes and stores.

Every request is authenticated first (``Authorization: Bearer <token>``, compared in constant time by the API's
``AccessPolicy``; 401 otherwise). ``Host`` and ``Origin`` were checked before that, by the app's ``HostGuard`` that
wraps every route (DNS rebinding), so the SDK's own check of them is off: one rule for the API and MCP. Each MCP
session (``Mcp-Session-Id``) is one connection with its own evidence session, usable only with the token that
opened it.

A client that ends its session normally closes the SDK's event stream under its writer, which the SDK logs as an
error with a traceback; ``QuietNormalDisconnect`` turns that one case into a debug line.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from agrag.service.api.access import AccessPolicy, Caller
from agrag.service.api.dependencies import RunQueue
from agrag.service.api.errors import AuthenticationError, error_response
from agrag.service.mcp.server import AgragMcpServer, McpOptions
from agrag.service.tools.tool import ToolHost
from agrag.service.tools.write_tools import WriteHost

logger = logging.getLogger(__name__)

CALLER_KEY = "agrag.caller"
MAX_CONNECTIONS = 1000
SDK_TRANSPORT_LOGGER = "mcp.server.streamable_http"
# Host and Origin are the app's HostGuard's; the SDK still checks a POST's Content-Type.
SDK_SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)


class QuietNormalDisconnect(logging.Filter):
    """Drop the SDK's "Error in standalone SSE writer" when the stream was closed: a client that ended its session.

    The SDK closes the event stream's reader when a session ends (the client's DELETE, or the server stopping) while
    the writer still reads it, which raises ``ClosedResourceError`` (``BrokenResourceError`` if the client went first)
    and logs a traceback. Its per-request writer treats the same close as a debug line; so does this. Any other error
    of that writer, and every other record, passes unchanged.
    """

    MESSAGE = "Error in standalone SSE writer"
    CLOSED = (anyio.ClosedResourceError, anyio.BrokenResourceError)

    def filter(self, record: logging.LogRecord) -> bool:
        """False (drop, after a debug line) for the normal close; True for everything else."""
        if record.msg == self.MESSAGE and record.exc_info and isinstance(record.exc_info[1], self.CLOSED):
            logger.debug("An MCP client's event stream closed (%s)", type(record.exc_info[1]).__name__)
            return False
        return True


def quiet_normal_disconnects() -> None:
    """Put ``QuietNormalDisconnect`` on the SDK's transport logger, once."""
    sdk = logging.getLogger(SDK_TRANSPORT_LOGGER)
    if not any(isinstance(f, QuietNormalDisconnect) for f in sdk.filters):
        sdk.addFilter(QuietNormalDisconnect())


class McpHttpEndpoint:
    """The ASGI app of ``/mcp`` and the SDK session manager behind it; run ``running()`` in the app's lifespan.

    Usage:
        ```python
        endpoint = McpHttpEndpoint(host, access, McpOptions())
        app.router.routes.append(Route(MCP_PATH, endpoint=endpoint))
        async with endpoint.running():
            ...  # serve
        ```
    """

    def __init__(
        self,
        host: ToolHost,
        access: AccessPolicy,
        options: McpOptions | None = None,
        *,
        queue: RunQueue | None = None,
    ) -> None:
        """Serve ``host``'s tools to the callers ``access`` admits (Host and Origin are checked before, by the app).

        Without ``options``, the ledger capacity and result limit are the settings' (``AGRAG_MCP_*``).

        With ``queue``, the write tools are offered too (to unscoped tokens), writing through that queue.
        """
        self.access = access
        settings = host.runtime.settings.agrag
        options = options or McpOptions.from_settings(settings)
        if queue is not None:
            host = WriteHost(host.runtime, queue)
            options = replace(options, allow_write=True)
        self.mcp = AgragMcpServer(host, _caller_of, options, secrets=access.secrets())
        quiet_normal_disconnects()
        self.manager = StreamableHTTPSessionManager(
            app=self.mcp.server,
            security_settings=SDK_SECURITY,
            session_idle_timeout=settings.session_idle_minutes * 60,
            max_sessions=MAX_CONNECTIONS,
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the session manager (its task group holds every open MCP session) while the block runs."""
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Authenticate the request, then hand it to the SDK's streamable HTTP transport."""
        headers = dict(scope.get("headers", ()))
        authorization = headers.get(b"authorization")
        try:
            caller = self.access.authenticate(authorization.decode("latin-1") if authorization else None)
        except AuthenticationError as exc:
            await error_response(exc)(scope, receive, send)
            return
        scope[CALLER_KEY] = caller
        scope.setdefault("state", {})["caller"] = caller.name  # for the access log line
        await self.manager.handle_request(scope, receive, send)


def _caller_of(context: Any) -> Caller:
    """The caller the endpoint authenticated, from the HTTP request behind an MCP request."""
    request = context.request
    caller = request.scope.get(CALLER_KEY) if request is not None else None
    if not isinstance(caller, Caller):
        raise AuthenticationError("This MCP request carried no authenticated caller; send a bearer token.")
    return caller
