"""The API's ASGI middleware: one log line per request, the Host and Origin check, a bound on a request body."""

from __future__ import annotations

import logging
import time

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agrag.components.safe_text import printable
from agrag.service.api.allowed_hosts import AllowedHosts
from agrag.service.api.errors import PayloadTooLargeError, error_response

access_log = logging.getLogger("agrag.service.api.requests")
logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024  # the largest input (an answer of 100,000 characters, 1,000 ids) fits many times


class AccessLog:
    """One line per request with method, path, status, time and the token's name.

    Never the token, never a body, never the query string. uvicorn's own access log is off (``agrag serve``).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on and log its line when it is answered."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            caller = scope.get("state", {}).get("caller", "-")
            elapsed = (time.perf_counter() - started) * 1000
            access_log.info("%s %s %d %.0fms %s", scope["method"], scope["path"], status, elapsed, caller)


class HostGuard:
    """Answer a request whose Host does not name this server with 421, one from another site's page with 403.

    It wraps the whole app, so every route (the API, the OpenAPI pages, health, /mcp, and any page added later) is
    checked before it runs; the rule is ``AllowedHosts``. A WebSocket handshake is closed the same way.
    """

    def __init__(self, app: ASGIApp, allowed: AllowedHosts) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an allowed request on; answer any other with the typed error."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers", ())
        hosts = [value for name, value in headers if name == b"host"]
        origins = [value for name, value in headers if name == b"origin"]
        server = scope.get("server")
        local = (str(server[0]), int(server[1])) if server and server[1] is not None else None
        refusal = self.allowed.refusal(hosts, origins, local)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        path = printable(str(scope.get("path", "")), multiline=False)
        logger.warning("Refused %s %s: %s", scope.get("method", "WEBSOCKET"), path, refusal)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # policy violation; the server answers 403
            return
        await error_response(refusal)(scope, receive, send)


class BodyLimit:
    """Refuse a request body over ``max_bytes`` with 413, by its Content-Length or while it streams in."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 413 at once for a declared length over the limit; else count the bytes as they arrive."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await error_response(self._too_large())(scope, receive, send)
            return
        received = 0

        async def receiving() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # FastAPI turns any other error while it reads a body into a 400; an HTTPException passes.
                    raise HTTPException(413, str(self._too_large()))
            return message

        await self.app(scope, receiving, send)

    def _too_large(self) -> PayloadTooLargeError:
        return PayloadTooLargeError(
            f"The request body is larger than {self.max_bytes // 1024} KiB, the most it may be."
        )
