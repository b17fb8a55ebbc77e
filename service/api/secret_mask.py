"""``SecretMask``: the secrets of a server, masked in every error text a client gets (HTTP and MCP alike).

The secrets are the LLM and Qdrant API keys, the client token, and each accepted API token, read as tokens
(``access.load_tokens``): the token list is never cut into pieces, so a document id of a scoped token, which a caller
may name in a request, stays readable in the error that names it. Whatever looks like a bearer token, an ``sk-`` key
or an ``api_key=...`` is masked too.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable

from agrag.components.errors import ConfigError
from agrag.pipelines.settings import AgragSettings
from agrag.service.api.access import load_tokens

MASK = "***"
MIN_SECRET_CHARS = 4
_SECRET_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)[^\s,;\"']+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)((?:api[_-]?key|token|password|secret)[\"']?\s*[:=]\s*[\"']?)[^\s,;\"'&]+"),
)


class SecretMask:
    """Masks the given secrets, and whatever looks like a key or a token, in a text.

    Usage:
        ```python
        mask = SecretMask([*access.secrets(), *settings_secrets(settings)])
        message = mask(str(error))
        ```
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        """Mask each of ``secrets`` (empty and very short ones ignored), longest first."""
        self._secrets = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        for pattern in _SECRET_PATTERNS:
            text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + MASK, text)
        return text


def settings_secrets(settings: AgragSettings) -> list[str]:
    """The secrets of the settings: the API keys, the client token and each token of the token settings.

    A token setting that does not parse (the server refuses to start with it; ``agrag mcp`` does not read it) is
    masked whole, never cut into pieces.
    """
    keys = [settings.llm_api_key, settings.qdrant_api_key, settings.api_token, settings.api_tokens]
    secrets = [key.get_secret_value() for key in keys if key is not None]
    with contextlib.suppress(ConfigError):
        secrets += [token.secret for token in load_tokens(settings)]
    return secrets
