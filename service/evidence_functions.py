"""The evidence functions of ``agrag.evidence`` as plain functions, over one default session per scope and process.

A script calls them directly; the data dir (``AGRAG_DATA_DIR``, settings from the environment as for the CLI) opens
on the first call and stays open until ``close()`` or the end of the process:

    ```python
    from agrag.evidence import check_citations, discover, fetch

    found = discover("Who wrote the Orion Planner?")
    passages = fetch([hit.id for hit in found.hits[:3]])
    check = check_citations(f"Maria Chen wrote it [{found.hits[0].id}].")
    print(check.cited, check.invalid)
    ```

Every function takes ``documents=`` (the document ids it may read) or ``scope=`` (an ``EvidenceScope``); calls with
the same scope share one session, so ``check_citations`` sees what ``fetch`` and ``navigate`` returned in that scope,
and nothing outside it is ever read. ``session=`` runs a call on a session of your own instead. ``opened(...)``
opens the data dir with Hydra overrides (``vector_store=qdrant``) and closes it at the end of a ``with`` block.

Each function delegates to the ``EvidenceSession`` method of the same name, which documents it.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agrag.components.data_models.citations import CitationCheck, RenderedAnswer
from agrag.components.data_models.evidence import (
    Direction,
    DiscoverMode,
    DiscoverResult,
    EntityEvidence,
    EvidenceScope,
    ExploreResult,
    FetchResult,
)
from agrag.components.errors import EvidenceError, StoreLockedError
from agrag.pipelines.document_ids import check_documents_known
from agrag.pipelines.evidence_session import EvidenceSession
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.pipelines.settings import Settings, load_settings
from agrag.service.server.server_file import ServerInfo, find_server

Documents = Sequence[str] | str | None


@dataclass
class _Opened:
    """The data dir this process opened for the functions, and their sessions by scope."""

    runtime: Runtime
    overrides: tuple[str, ...]
    sessions: dict[EvidenceScope, EvidenceSession] = field(default_factory=dict)


_LOCK = threading.RLock()
_OPENED: list[_Opened] = []  # at most one; a list so the functions need no `global`
_AT_EXIT: list[bool] = []


def _served_error(data_dir: Path, server: ServerInfo) -> StoreLockedError:
    return StoreLockedError(
        f"agrag serve (process {server.pid}, {server.url}) holds the data dir {data_dir}, and the embedded stores "
        "open in one process at a time, so this process cannot read it. Use the server's evidence tools instead "
        f"(POST {server.url}/v1/sessions, then POST {server.url}/v1/sessions/ID/discover, /fetch, ...; or its MCP "
        "server, or the `agrag evidence` commands, which go through it), or stop the server and call again."
    )


def _open(overrides: Sequence[str], settings: Settings | None) -> _Opened:
    """The open data dir, opened with ``overrides`` now if nothing is open (the caller holds ``_LOCK``)."""
    if _OPENED:
        if tuple(overrides) and _OPENED[0].overrides != tuple(overrides):
            raise EvidenceError(
                f"The evidence functions have the data dir open with overrides {list(_OPENED[0].overrides)}, not "
                f"{list(overrides)}. Call agrag.evidence.close() first to open it again with others."
            )
        return _OPENED[0]
    settings = settings or load_settings()
    data_dir = settings.agrag.data_dir
    server = find_server(data_dir)
    if server is not None:
        raise _served_error(data_dir, server)
    try:
        runtime = open_runtime(list(overrides), settings)
    except StoreLockedError as exc:
        server = find_server(data_dir)
        if server is not None:
            raise _served_error(data_dir, server) from exc
        raise
    _OPENED.append(_Opened(runtime, tuple(overrides)))
    if not _AT_EXIT:
        _AT_EXIT.append(True)
        atexit.register(close)  # a clean close releases the data dir and spares the next open its damage check
    return _OPENED[0]


def _scope_of(documents: Documents, scope: EvidenceScope | None) -> EvidenceScope:
    if documents is not None and scope is not None:
        raise EvidenceError("Give the documents to read either as documents= or as scope=, not both.")
    if scope is not None:
        return scope
    if documents is None:
        return EvidenceScope()
    return EvidenceScope((documents,) if isinstance(documents, str) else tuple(documents))


def session(documents: Documents = None, *, scope: EvidenceScope | None = None) -> EvidenceSession:
    """The default session of a scope: the one the functions use for calls with the same ``documents``/``scope``.

    Opens the data dir on first use. Without ``documents`` and ``scope`` the session reads every document.

    Raises:
        UnknownDocumentIdError: a document id names no stored document.
        StoreLockedError: another process holds the data dir (the message says when it is ``agrag serve``).
        NothingIngestedError: nothing was ingested into ``AGRAG_DATA_DIR`` yet.
    """
    wanted = _scope_of(documents, scope)
    with _LOCK:
        opened = _open((), None)
        found = opened.sessions.get(wanted)
        if found is None:
            check_documents_known(opened.runtime.store.graph, wanted.document_ids)
            found = opened.sessions[wanted] = opened.runtime.evidence_session(wanted)
        return found


def _session(given: EvidenceSession | None, documents: Documents, scope: EvidenceScope | None) -> EvidenceSession:
    if given is None:
        return session(documents, scope=scope)
    if documents is not None or scope is not None:
        raise EvidenceError("A call on session= reads that session's scope: leave documents= and scope= out.")
    return given


def close() -> None:
    """Close the data dir the functions opened and forget their sessions (the next call opens it again)."""
    with _LOCK:
        if _OPENED:
            _OPENED.pop().runtime.close()


@contextmanager
def opened(overrides: Sequence[str] = (), *, settings: Settings | None = None) -> Iterator[EvidenceSession]:
    """Open the data dir for the functions (with Hydra ``overrides``), yield the unscoped session, close at the end.

    Usage:
        ```python
        with opened(["vector_store=qdrant"]) as everything:
            found = discover("Orion Planner")  # the functions use the data dir opened here
        ```
    """
    with _LOCK:
        _open(overrides, settings)
    try:
        yield session()
    finally:
        close()


def discover(
    query: str,
    mode: DiscoverMode | str | None = None,
    limit: int = 10,
    *,
    documents: Documents = None,
    scope: EvidenceScope | None = None,
    session: EvidenceSession | None = None,
) -> DiscoverResult:
    """Search the current versions of the documents in scope for passages about ``query`` (see ``EvidenceSession``).

    ``mode`` None is the session's ``default_mode``: ``graph`` for a session this module opens.
    """
    return _session(session, documents, scope).discover(query, mode, limit)


def fetch(
    ids: Iterable[str] | str,
    *,
    documents: Documents = None,
    scope: EvidenceScope | None = None,
    session: EvidenceSession | None = None,
) -> FetchResult:
    """The exact text behind evidence ids (one id or several); what is fetched is what citations are checked against."""
    return _session(session, documents, scope).fetch([ids] if isinstance(ids, str) else ids)


def navigate(
    evidence_id: str,
    direction: Direction | str,
    *,
    documents: Documents = None,
    scope: EvidenceScope | None = None,
    session: EvidenceSession | None = None,
) -> FetchResult:
    """The passages next to one: parent, children, siblings, previous, next, or table cells."""
    return _session(session, documents, scope).navigate(evidence_id, direction)


def find_entities(
    query: str,
    limit: int = 10,
    *,
    documents: Documents = None,
    scope: EvidenceScope | None = None,
    session: EvidenceSession | None = None,
) -> tuple[EntityEvidence, ...]:
    """Entities in scope that ``query`` names or resembles, each with up to 3 supporting passage ids."""
    return _session(session, documents, scope).find_entities(query, limit)


def explore(
    entity: str,
    depth: int = 1,
    relation_types: Sequence[str] | None = None,
    limit: int = 50,
    *,
    documents: Documents = None,
    scope: EvidenceScope | None = None,
    session: EvidenceSession | None = None,
) -> ExploreResult:
    """The relations around an entity (its id or name), ``depth`` hops out, within the scope."""
    return _session(session, documents, scope).explore(entity, depth, relation_types, limit)


def check_citations(
    answer: str,
    *,
    documents: Documents = None,
    scope: EvidenceScope | None = None,
    session: EvidenceSession | None = None,
) -> CitationCheck:
    """Check the ids cited in ``answer`` against what was fetched in the same scope (or on ``session``)."""
    return _session(session, documents, scope).check_citations(answer)


def render_citations(
    answer: str,
    *,
    documents: Documents = None,
    scope: EvidenceScope | None = None,
    session: EvidenceSession | None = None,
) -> RenderedAnswer:
    """``answer`` with its valid citations numbered and a Sources list (what was fetched in the same scope)."""
    return _session(session, documents, scope).render_citations(answer)
