"""Errors of the CLI as a client, and the API's error JSON turned back into the ``AgragError`` the server raised.

The server answers an error with ``{"error": "<class name>", "message": "<one line>"}``. ``error_from`` makes the
same class again with the server's line as its message, so the CLI prints exactly what it prints when the error is
raised in-process and exits with the same code (2 for a configuration error, 1 otherwise).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from agrag.components.errors import AgragError, EvidenceError, IngestError

# Modules that define errors only the server raises; imported (once) only to name an error the client has not met.
_SERVER_ERROR_MODULES = (
    "agrag.service.tools.errors",
    "agrag.service.api.errors",
    "agrag.components.loaders.loader_errors",
    "agrag.components.extractors.reextract_errors",
    "agrag.components.text_preview_errors",
    "agrag.components.ontology_errors",
    "agrag.components.component_errors",
    "agrag.components.choice_errors",
)
# Server errors whose module is too heavy to import for a name: the nearest class the client has.
_NEAREST = {"SessionNotFoundError": EvidenceError}


class ServerUnavailableError(AgragError):
    """The server named by the data dir's server file did not answer: refused, timed out, or cut off."""

    def __init__(self, url: str, pid: int, data_dir: Path, reason: str) -> None:
        self.url = url
        self.pid = pid
        super().__init__(
            f"The agrag server at {url} (process {pid}), which holds the data dir {data_dir}, did not answer: "
            f"{reason}. If it is still starting, try again in a moment; otherwise stop it (Ctrl+C where `agrag "
            f"serve` runs, or `kill {pid}`) and the command works on the data dir by itself."
        )


class ServerResponseError(AgragError):
    """The server refused a request with an error the client has no class of (e.g. an invalid argument)."""

    def __init__(self, status: int, error: str, message: str) -> None:
        self.status = status
        self.error = error
        super().__init__(message)


class NoServerError(AgragError):
    """A command that needs a running ``agrag serve`` found none holding the data dir."""

    def __init__(self, data_dir: Path, command: str) -> None:
        self.data_dir = data_dir
        super().__init__(
            f"No agrag server holds the data dir {data_dir}, and `{command}` asks one: runs are queued, listed and "
            "cancelled by `agrag serve`. Start it with `agrag serve` (or set AGRAG_DATA_DIR to the data dir it "
            "serves); without a server, `agrag ingest` and `agrag delete` run at once and print their report."
        )


class RunEndedError(IngestError):
    """A run followed on the server failed, was cancelled or was interrupted; the message is the run's own."""


def error_from(status: int, body: Any) -> AgragError:
    """The error of an API answer with ``status`` and JSON ``body`` (or any body, for an answer not from agrag)."""
    name = body.get("error") if isinstance(body, dict) else None
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(name, str) or not isinstance(message, str):
        return ServerResponseError(status, "HTTPError", f"The server answered HTTP {status} with no agrag error.")
    kind = error_class(name)
    if kind is None:
        return ServerResponseError(status, name, message)
    # Subclasses compose their message in __init__ from their arguments; the server's line is that message already.
    error = kind.__new__(kind)
    Exception.__init__(error, message)
    return error


def error_class(name: str) -> type[AgragError] | None:
    """The ``AgragError`` subclass called ``name``, or None."""
    found = _subclass_named(name)
    if found is None and name in _NEAREST:
        return _NEAREST[name]
    if found is None:
        for module in _SERVER_ERROR_MODULES:
            importlib.import_module(module)
        found = _subclass_named(name)
    return found


def _subclass_named(name: str) -> type[AgragError] | None:
    pending: list[type[AgragError]] = [AgragError]
    while pending:
        kind = pending.pop()
        if kind.__name__ == name:
            return kind
        pending.extend(kind.__subclasses__())
    return None
