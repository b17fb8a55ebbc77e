"""Server-side evidence sessions: each bound to the token that made it, within that token's documents.

A session id alone is worth nothing: asked for with another token, a session answers exactly as an unknown id does.
Idle sessions end after ``AGRAG_SESSION_IDLE_MINUTES`` and a token may hold ``AGRAG_SESSIONS_PER_TOKEN`` at once.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.errors import EvidenceError
from agrag.pipelines.document_ids import check_documents_known
from agrag.pipelines.evidence_session import EvidenceSession
from agrag.service.api.access import Caller
from agrag.service.api.errors import ConflictError
from agrag.service.tools.text_fields import DocumentIdText

MAX_RESTORED_IDS = 1000


class SessionNotFoundError(EvidenceError, LookupError):
    """No session with this id belongs to the caller (it never existed, ended, or is another token's)."""

    def __init__(self, session_id: str, idle_minutes: float) -> None:
        self.session_id = session_id
        super().__init__(
            f"No evidence session {session_id!r} is open for your token (sessions end when deleted or after "
            f"{idle_minutes:g} minutes unused). Create one with POST /v1/sessions."
        )


class SessionRequest(BaseModel):
    """The body of ``POST /v1/sessions``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    documents: tuple[DocumentIdText, ...] | None = Field(
        None,
        min_length=1,
        description="Only these document ids may be read in the session (with a token limited to documents: only "
        "those of them it may read). Leave out for every document the token may read.",
    )
    fetched: tuple[str, ...] = Field(
        (),
        max_length=MAX_RESTORED_IDS,
        description="Evidence ids a client read earlier (e.g. from its session file): they are fetched again within "
        "the session's scope, so check_citations accepts them; those not found there are listed in not_restored.",
    )


class SessionInfo(BaseModel):
    """An evidence session as the API shows it."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(..., description="The session id: the path /v1/sessions/{id}/... of its tools.")
    scope: tuple[str, ...] | None = Field(..., description="The documents it may read; null: every document.")
    fetched: int = Field(..., description="Evidence read in it so far (what citations are checked against).")
    not_restored: tuple[str, ...] = Field((), description="Asked-for earlier ids not found within the scope.")
    idle_minutes: float = Field(..., description="It ends after this long without a call.")


@dataclass
class _Entry:
    session: EvidenceSession
    owner: str
    last_used: float
    lock: threading.Lock = field(default_factory=threading.Lock)


class SessionStore:
    """The open evidence sessions of a server, by id, each bound to the caller that created it.

    Calls on one session run one at a time; calls on different sessions run in parallel.

    Usage:
        ```python
        sessions = SessionStore(runtime.evidence_session)
        info = sessions.create(caller, documents=None, fetched=())
        with sessions.use(caller, info.id) as session:
            session.discover("Who wrote the Orion Planner?")
        ```
    """

    def __init__(
        self,
        factory: Callable[[EvidenceScope], EvidenceSession],
        idle_minutes: float = 30.0,
        per_caller: int = 32,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Make sessions with ``factory(scope)``; end them after ``idle_minutes``; ``per_caller`` at most each."""
        self._factory = factory
        self.idle_minutes = idle_minutes
        self.per_caller = per_caller
        self._clock = clock
        self._sessions: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def create(self, caller: Caller, documents: Sequence[str] | None, fetched: Sequence[str] = ()) -> SessionInfo:
        """A new session within the caller's documents (and ``documents``, if given), with ``fetched`` read again.

        The caller should hold the store's read lock, as ``fetched`` is read from the stores.

        Raises:
            ConflictError: the caller already holds ``per_caller`` sessions.
            EvidenceError: a malformed id in ``fetched`` (no session is made).
            UnknownDocumentIdError: ``documents`` names ids of no stored document (no session is made).
        """
        scope = _scope(caller.documents, documents)
        with self._lock:
            self._expire()
            held = sum(entry.owner == caller.fingerprint for entry in self._sessions.values())
            if held >= self.per_caller:
                raise ConflictError(
                    f"Your token holds {held} evidence sessions, the most it may; delete one (DELETE "
                    f"/v1/sessions/ID) or let one end ({self.idle_minutes:g} minutes unused)."
                )
        session = self._factory(scope)
        if documents and scope.document_ids:  # ids the caller named, within its documents (not a token's own scope)
            check_documents_known(session.store.graph, scope.document_ids)
        restored = session.fetch(fetched) if fetched else None
        session_id = "s" + secrets.token_urlsafe(18)
        with self._lock:
            self._sessions[session_id] = _Entry(session, caller.fingerprint, self._clock())
        not_restored = restored.not_found if restored is not None else ()
        return self._info(session_id, session, not_restored)

    @contextmanager
    def use(self, caller: Caller, session_id: str) -> Iterator[EvidenceSession]:
        """The caller's session, held for one call (another call on it waits).

        Raises:
            SessionNotFoundError: no such session of this caller.
        """
        entry = self._entry(caller, session_id)
        with entry.lock:
            try:
                yield entry.session
            finally:
                entry.last_used = self._clock()

    def info(self, caller: Caller, session_id: str) -> SessionInfo:
        """What the session is: its scope and how much it read.

        Raises:
            SessionNotFoundError: no such session of this caller.
        """
        return self._info(session_id, self._entry(caller, session_id).session)

    def delete(self, caller: Caller, session_id: str) -> None:
        """End a session.

        Raises:
            SessionNotFoundError: no such session of this caller.
        """
        self._entry(caller, session_id)
        with self._lock:
            self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._sessions)

    def _entry(self, caller: Caller, session_id: str) -> _Entry:
        with self._lock:
            self._expire()
            entry = self._sessions.get(session_id)
            if entry is None or entry.owner != caller.fingerprint:
                # Another token's session is answered exactly as an unknown one.
                raise SessionNotFoundError(session_id, self.idle_minutes)
            entry.last_used = self._clock()
            return entry

    def _expire(self) -> None:
        """Drop the sessions unused for ``idle_minutes`` (the caller holds ``_lock``)."""
        oldest = self._clock() - self.idle_minutes * 60
        for session_id in [k for k, e in self._sessions.items() if e.last_used < oldest and not e.lock.locked()]:
            del self._sessions[session_id]

    def _info(self, session_id: str, session: EvidenceSession, not_restored: tuple[str, ...] = ()) -> SessionInfo:
        return SessionInfo(
            id=session_id,
            scope=session.scope.document_ids,
            fetched=len(session.fetched),
            not_restored=not_restored,
            idle_minutes=self.idle_minutes,
        )


def _scope(allowed: tuple[str, ...] | None, asked: Sequence[str] | None) -> EvidenceScope:
    """The documents a session may read: those the caller may read, narrowed to ``asked``."""
    if asked is None:
        return EvidenceScope(allowed)
    if allowed is None:
        return EvidenceScope(tuple(asked))
    return EvidenceScope(tuple(d for d in asked if d in allowed))
