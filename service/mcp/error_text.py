"""What an MCP client is told when a tool call fails: one short message with the kind of failure and a next step.

The full detail (with the traceback) goes to the server log. Secrets (the LLM and Qdrant API keys, the API tokens,
anything that looks like a bearer token or an ``sk-`` key) are masked in every text a client gets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
from agrag.service.tools.errors import ConnectionOwnerError, ReadOnlyToolError, ScopedWriteError

MASK = "***"
MAX_MESSAGE_CHARS = 1200
MAX_ARGUMENT_ERRORS = 5
_SECRET_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)[^\s,;\"']+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)((?:api[_-]?key|token|password|secret)[\"']?\s*[:=]\s*[\"']?)[^\s,;\"'&]+"),
)
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


class SecretMask:
    """Masks the given secrets, and whatever looks like a key or a token, in a text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        """Mask each of ``secrets`` (empty ones ignored), longest first."""
        self._secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        for pattern in _SECRET_PATTERNS:
            text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + MASK, text)
        return text


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
