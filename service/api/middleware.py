"""The API's ASGI middleware: one log line per request, and a bound on the size of a request body."""

from __future__ import annotations

import logging
import time

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agrag.service.api.errors import PayloadTooLargeError, error_response

access_log = logging.getLogger("agrag.service.api.requests")

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
