"""Who may call the HTTP API: bearer tokens from the settings, each optionally limited to some documents.

The tokens come from ``AGRAG_API_TOKENS`` and ``AGRAG_API_TOKEN_FILE`` (parsed here and nowhere else), plus the
server's own local token, which it writes into its server file for the agrag CLI of the same machine. Tokens are
compared in constant time and never appear in a message, a log line or a ``repr``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.errors import ConfigError
from agrag.pipelines.settings import AgragSettings
from agrag.service.api.errors import AuthenticationError

MIN_TOKEN_CHARS = 16
OWNER = "owner"
ANONYMOUS = "anonymous"
_HOW_TO_MAKE_ONE = "make one with `python -c 'import secrets; print(secrets.token_urlsafe(32))'`"


@dataclass(frozen=True)
class ApiToken:
    """One accepted token.

    Attributes:
        name: What logs call its holder (never the token itself).
        secret: The token.
        documents: The only document ids it may read; None: every document (and the admin routes).
    """

    name: str
    secret: str = field(repr=False)
    documents: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Caller:
    """Who made a request, as far as the API cares.

    Attributes:
        name: The token's name (``owner`` for the server's local token, ``anonymous`` on an open server).
        fingerprint: A digest of the token that binds evidence sessions to it.
        documents: The documents it may read; None: every document.
    """

    name: str
    fingerprint: str
    documents: tuple[str, ...] | None = None

    @property
    def scope(self) -> EvidenceScope:
        """The caller's documents as an evidence scope."""
        return EvidenceScope(self.documents)

    @property
    def unscoped(self) -> bool:
        """True when the caller may read every document (and use the admin routes)."""
        return self.documents is None


def fingerprint(secret: str) -> str:
    """A digest of a token that names it without revealing it."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()[:24]


def new_owner_token() -> str:
    """A fresh local token for a server's owner (the CLI on the same machine reads it from the server file)."""
    return secrets.token_urlsafe(32)


def parse_tokens(text: str, source: str) -> list[ApiToken]:
    """The tokens of a setting: ``t1,t2`` or one a line, or a JSON list of ``{"name", "token", "documents"}``.

    Args:
        text: The setting's value (or the token file's content).
        source: Where it came from, named in errors (``AGRAG_API_TOKENS``, or the token file).

    Raises:
        ConfigError: malformed JSON, a token shorter than 16 characters or holding white space, a token or a name
            given twice, or a ``documents`` that is not a non-empty list of ids. The message never quotes a token.
    """
    stripped = text.strip()
    if not stripped:
        return []
    if stripped.startswith("["):
        entries = _json_entries(stripped, source)
    else:
        lines = [line.strip() for line in stripped.splitlines() if not line.strip().startswith("#")]
        entries = [{"token": t.strip()} for line in lines for t in line.split(",") if t.strip()]
    tokens = [_token(entry, index, source) for index, entry in enumerate(entries, start=1)]
    _check_unique(tokens, source)
    return tokens


def _json_entries(text: str, source: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f'{source} starts with "[" but is not valid JSON (line {exc.lineno}, column {exc.colno}): write a '
            'JSON list like [{"name": "team", "token": "...", "documents": ["d3f..."]}], or tokens separated by '
            "commas."
        ) from None
    entries = [{"token": e} if isinstance(e, str) else e for e in data] if isinstance(data, list) else None
    if entries is None or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f'{source} must be a JSON list of {{"name", "token", "documents"}} objects.')
    return entries


def _token(entry: dict[str, Any], index: int, source: str) -> ApiToken:
    unknown = sorted(set(entry) - {"name", "token", "documents"})
    if unknown:
        raise ConfigError(f"Token {index} of {source} has unknown keys {unknown}; use name, token and documents.")
    secret, name, documents = entry.get("token"), entry.get("name") or f"token-{index}", entry.get("documents")
    if not isinstance(secret, str) or not isinstance(name, str):
        raise ConfigError(f'Token {index} of {source} needs a "token" string (and a "name" string, if any).')
    if len(secret) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"Token {index} ({name}) of {source} has {len(secret)} characters; a token needs at least "
            f"{MIN_TOKEN_CHARS}: {_HOW_TO_MAKE_ONE}."
        )
    if any(c.isspace() for c in secret):
        raise ConfigError(f"Token {index} ({name}) of {source} holds white space; tokens may not.")
    if documents is not None and (
        not isinstance(documents, list) or not documents or not all(isinstance(d, str) and d for d in documents)
    ):
        raise ConfigError(
            f'Token {index} ({name}) of {source}: "documents" must be a non-empty list of document ids, or left out '
            "for a token that may read every document."
        )
    return ApiToken(name, secret, None if documents is None else tuple(sorted(set(documents))))


def _check_unique(tokens: Sequence[ApiToken], source: str) -> None:
    names = [t.name for t in tokens]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ConfigError(f"{source} names more than one token {twice[0]!r}; give each token its own name.")
    if len({t.secret for t in tokens}) != len(tokens):
        raise ConfigError(f"{source} holds the same token twice; each token must be different.")


def load_tokens(settings: AgragSettings) -> list[ApiToken]:
    """The tokens of ``AGRAG_API_TOKENS`` and of the file ``AGRAG_API_TOKEN_FILE`` names.

    Raises:
        ConfigError: as ``parse_tokens``, or the token file cannot be read.
    """
    tokens = []
    if settings.api_tokens is not None:
        tokens += parse_tokens(settings.api_tokens.get_secret_value(), "AGRAG_API_TOKENS")
    if settings.api_token_file is not None:
        path = Path(settings.api_token_file)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"AGRAG_API_TOKEN_FILE={path} cannot be read ({exc.strerror}). Point it at a file of tokens."
            ) from None
        tokens += parse_tokens(text, f"AGRAG_API_TOKEN_FILE ({path})")
    _check_unique(tokens, "AGRAG_API_TOKENS and AGRAG_API_TOKEN_FILE together")
    return tokens


def is_loopback(host: str) -> bool:
    """True for a host only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class AccessPolicy:
    """Decides who a request comes from: the configured tokens and the server's own token, or anyone when open.

    A server with no configured token is open (anyone who reaches it may do anything), which ``check_host`` allows
    only on a loopback host. A token that is sent must be valid even then.

    Usage:
        ```python
        policy = AccessPolicy(load_tokens(settings), owner_token=secrets.token_urlsafe(32))
        caller = policy.authenticate(request.headers.get("authorization"))
        ```
    """

    def __init__(self, tokens: Sequence[ApiToken], owner_token: str | None = None) -> None:
        """Accept ``tokens`` and, unscoped, ``owner_token`` (the server's local token)."""
        self.configured = tuple(tokens)
        owner = [ApiToken(OWNER, owner_token)] if owner_token else []
        self._tokens = (*self.configured, *owner)

    def __repr__(self) -> str:
        return f"AccessPolicy({len(self.configured)} tokens, open={self.open})"

    @property
    def open(self) -> bool:
        """True when no token is configured: a request without one is the unscoped anonymous caller."""
        return not self.configured

    def secrets(self) -> tuple[str, ...]:
        """Every accepted token, for masking them in error texts (never to show or log)."""
        return tuple(token.secret for token in self._tokens)

    def check_host(self, host: str) -> None:
        """Refuse to serve an open API on a host other machines can reach.

        Raises:
            ConfigError: no token is configured and ``host`` is not a loopback address.
        """
        if self.open and not is_loopback(host):
            raise ConfigError(
                f"Serving on {host} lets other machines reach the API, so it needs tokens: set AGRAG_API_TOKENS "
                f"(or AGRAG_API_TOKEN_FILE) to tokens of at least {MIN_TOKEN_CHARS} characters, or serve on "
                "--host 127.0.0.1."
            )

    def authenticate(self, authorization: str | None) -> Caller:
        """The caller of a request with this ``Authorization`` header.

        Raises:
            AuthenticationError: no token where one is needed, a header that is not ``Bearer <token>``, or a token
                this server does not accept. The message never repeats the token.
        """
        if not authorization:
            if self.open:
                return Caller(ANONYMOUS, ANONYMOUS)
            raise AuthenticationError(
                "This server needs a token: send the header `Authorization: Bearer <token>` with one of the tokens "
                "of AGRAG_API_TOKENS."
            )
        scheme, _, given = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            raise AuthenticationError("The Authorization header must be `Bearer <token>`.")
        found = self._match(given.strip())
        if found is None:
            raise AuthenticationError("The token is not one this server accepts; check AGRAG_API_TOKEN or ask for one.")
        return Caller(found.name, fingerprint(found.secret), found.documents)

    def _match(self, given: str) -> ApiToken | None:
        # Every token is compared, whichever matches, so the time taken says nothing about which one is close.
        found = None
        presented = given.encode("utf-8")
        for token in self._tokens:
            if hmac.compare_digest(token.secret.encode("utf-8"), presented):
                found = token
        return found
