"""What an MCP client is told when a tool call fails: one short message with the kind of failure and a next step.

The full detail (with the traceback) goes to the server log. Secrets (the LLM and Qdrant API keys, the API tokens,
anything that looks like a bearer token or an ``sk-`` key) are masked in every text a client gets
(``agrag.service.api.secret_mask``, which the HTTP API's errors use too).
"""

from __future__ import annotations

from pydantic import ValidationError

from agrag.components.errors import (
    AgragError,
    ConfigError,
    EmbeddingError,
    EvidenceError,
    IngestError,
    LLMError,
    RetrievalError,
    StoreError,
)
from agrag.service.api.secret_mask import SecretMask
from agrag.service.tools.errors import ConnectionOwnerError, ReadOnlyToolError, ScopedWriteError

MAX_MESSAGE_CHARS = 1200
MAX_ARGUMENT_ERRORS = 5
_KINDS: tuple[tuple[type[BaseException], str], ...] = (
    (ReadOnlyToolError, "Read-only server"),
    (ScopedWriteError, "Not allowed"),
    (ConnectionOwnerError, "Not allowed"),
    (ConfigError, "Configuration error"),
    (LLMError, "Model provider error"),
    (StoreError, "Database error"),
    (EmbeddingError, "Embedding error"),
    (EvidenceError, "Evidence error"),
    (RetrievalError, "Retrieval error"),
    (IngestError, "Ingestion error"),
    (LookupError, "Not found"),
)


def error_text(exc: BaseException, mask: SecretMask) -> str:
    """The message a client gets for ``exc``: the kind of failure, what happened and what to do next."""
    if isinstance(exc, ValidationError):
        text = _arguments_text(exc)
    elif isinstance(exc, AgragError):
        text = f"{_kind(exc)}: {exc}"
    elif isinstance(exc, TimeoutError):
        text = "Timeout: the call took too long. Try again with a smaller limit or a narrower question."
    else:
        text = (
            f"Internal error ({type(exc).__name__}): the detail is in the server log. Try the call again; if it "
            "fails again, report it with that log."
        )
    text = mask(text)
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 1] + "…"


def _kind(exc: AgragError) -> str:
    for kind, name in _KINDS:
        if isinstance(exc, kind):
            return name
    return "Error"


def _arguments_text(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors()[:MAX_ARGUMENT_ERRORS]:
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - len(problems)
    extra = f" (and {more} more)" if more > 0 else ""
    return (
        f"Invalid arguments: {'; '.join(problems)}{extra}. Fix them and call again; the tool's input schema lists "
        "every field with its limits."
    )
