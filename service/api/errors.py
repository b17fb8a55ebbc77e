"""Errors of the HTTP API, and how every error becomes ``{"error": ..., "message": ...}`` with its status code.

A user's mistake gets a status below 500 and one line that says what was wrong; nothing unexpected ever sends a
traceback (it goes to the server's log instead).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from agrag.components.errors import (
    AgragError,
    ConfigError,
    EmbeddingError,
    EvidenceError,
    IngestError,
    LLMError,
    NothingIngestedError,
    RetrievalError,
    StoreError,
    StoreLockedError,
)
from agrag.components.page_errors import PageRangeError
from agrag.service.tools.errors import ScopedRecipeError

logger = logging.getLogger(__name__)


class AuthenticationError(AgragError):
    """A request came without a token, or with one the server does not accept."""


class ForbiddenError(AgragError):
    """The token is valid but may not do this (a token limited to documents asking for an admin route)."""


class HostNotAllowedError(AgragError):
    """A request whose Host header names another server (DNS rebinding), or no server at all: 421."""


class OriginNotAllowedError(ForbiddenError):
    """A request from a web page of another site (its Origin header is not this server's nor an allowed one): 403."""


class NotReadyError(AgragError):
    """The server is up but cannot answer yet (the model is loading) or any more (it is shutting down)."""


class ConflictError(AgragError):
    """The request conflicts with the server's state (too many sessions, a run that already ended)."""


class PayloadTooLargeError(AgragError):
    """A request body larger than the API takes."""


class ErrorBody(BaseModel):
    """What every error response holds."""

    error: str = Field(..., description="The error's type, e.g. EvidenceError or AuthenticationError.")
    message: str = Field(..., description="One line for a person: what was wrong and how to fix it.")
    detail: list[dict[str, Any]] | None = Field(None, description="For a 422: FastAPI's list of the invalid fields.")


# The first class an error is an instance of decides its status (subclasses before their parents).
_STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (HostNotAllowedError, 421),
    (AuthenticationError, 401),
    (ForbiddenError, 403),
    (ScopedRecipeError, 403),
    (LookupError, 404),
    (ConflictError, 409),
    (PayloadTooLargeError, 413),
    (PageRangeError, 422),  # as the input models refuse the same offset or limit
    (StoreLockedError, 409),
    (NotReadyError, 503),
    (NothingIngestedError, 503),
    (LLMError, 502),  # an LLMNotConfiguredError is a ConfigError, but the LLM side is where it must be fixed
    (ConfigError, 400),
    (RetrievalError, 400),
    (EvidenceError, 400),
    (IngestError, 400),
    (EmbeddingError, 500),
    (StoreError, 500),
)
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in (
        (400, "Bad input or configuration"),
        (401, "Missing or wrong token"),
        (403, "The token may not do this, or the request came from a web page of another site"),
        (404, "Unknown session, run, document or merge"),
        (409, "Conflict with the server's state"),
        (421, "The Host header does not name this server (DNS rebinding)"),
        (503, "Not ready"),
    )
}


def status_of(exc: BaseException) -> int:
    """The HTTP status of an error (500 for an error agrag did not raise on purpose)."""
    return next((status for kind, status in _STATUS if isinstance(exc, kind)), 500)


def one_line(text: str) -> str:
    """A message on one line (configuration errors list their problems on several)."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


class ErrorJSONResponse(JSONResponse):
    r"""An error's JSON: what it quotes of the request may hold a lone surrogate (bytes that were not UTF-8).

    It is sent as its JSON escape (``\udcff``) instead of failing to encode, which would turn a 422 into a 500.
    """

    def render(self, content: Any) -> bytes:
        """The body as UTF-8 JSON, a lone surrogate as its escape."""
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
        return text.encode("utf-8", "backslashreplace")


Mask = Callable[[str], str]
"""What hides the server's secrets in a text (``secret_mask.SecretMask``)."""


def _unmasked(text: str) -> str:
    return text


def error_response(exc: AgragError, mask: Mask = _unmasked) -> JSONResponse:
    """The JSON response of an agrag error, its message passed through ``mask``."""
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, AuthenticationError) else None
    body = ErrorBody(error=type(exc).__name__, message=mask(one_line(str(exc))))
    return ErrorJSONResponse(body.model_dump(exclude_none=True), status_code=status_of(exc), headers=headers)


def _validation_message(errors: list[Any]) -> str:
    problems = []
    for error in errors[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "the body"
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "Invalid request: " + "; ".join(problems) + more + "."


def _masked(value: Any, mask: Mask) -> Any:
    """Every string of a JSON value (a 422's list of invalid fields quotes the input) passed through ``mask``."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {key: _masked(item, mask) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(item, mask) for item in value]
    return value


def install_error_handlers(app: FastAPI, mask: Mask = _unmasked) -> None:
    """Make every error of ``app`` answer with an ``ErrorBody`` whose texts went through ``mask``."""

    @app.exception_handler(AgragError)
    async def _agrag(request: Request, exc: AgragError) -> JSONResponse:
        if status_of(exc) in (500, 502):
            logger.error("%s %s failed: %s", request.method, request.url.path, mask(one_line(str(exc))))
        return error_response(exc, mask)

    def _invalid_body(errors: list[dict[str, Any]]) -> JSONResponse:
        body = ErrorBody(error="ValidationError", message=_validation_message(errors), detail=errors)
        return ErrorJSONResponse(_masked(body.model_dump(mode="json"), mask), status_code=422)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _invalid_body([{k: v for k, v in e.items() if k != "ctx"} for e in exc.errors()])

    @app.exception_handler(ValidationError)
    async def _invalid_arguments(request: Request, exc: ValidationError) -> JSONResponse:
        return _invalid_body([{k: v for k, v in e.items() if k != "ctx"} for e in exc.errors()])

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        reason = {404: "NotFound", 405: "MethodNotAllowed", 413: "PayloadTooLargeError"}.get(
            exc.status_code, "HTTPError"
        )
        message = f"No route {request.method} {request.url.path}; the routes are listed at /docs."
        text = mask(message if exc.status_code in (404, 405) else one_line(str(exc.detail)))
        return JSONResponse(ErrorBody(error=reason, message=text).model_dump(exclude_none=True), exc.status_code)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("%s %s failed unexpectedly", request.method, request.url.path)
        body = ErrorBody(error="InternalError", message=f"The server failed on this request ({type(exc).__name__}).")
        return JSONResponse(body.model_dump(exclude_none=True), status_code=500)
