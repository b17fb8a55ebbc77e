"""``ServedEvidenceSession``: an evidence session held by the server, with the methods of ``EvidenceSession``.

``agrag evidence`` works on it exactly as on an in-process session: the session file's scope and fetched evidence
go in (the server reads the fetched ids again within the scope, so ``check`` accepts them), each call runs on the
server, and what ``fetch`` and ``navigate`` returned is kept for the session file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from agrag.components.data_models.citations import CitationCheck, RenderedAnswer
from agrag.components.data_models.evidence import (
    DiscoverResult,
    EntityEvidence,
    EvidenceScope,
    ExploreResult,
    FetchedEvidence,
    FetchResult,
)
from agrag.components.safe_text import require_text
from agrag.service.client.server_client import ServerClient


class ServedEvidenceSession:
    """An evidence session on the server, within ``scope``, continuing from ``fetched``.

    Usage:
        ```python
        with ServedEvidenceSession.opened(server, EvidenceScope(), []) as session:
            found = session.discover("Who wrote the Orion Planner?")
            session.fetch([found.hits[0].id])
        ```
    """

    def __init__(
        self, server: ServerClient, session_id: str, scope: EvidenceScope, fetched: Iterable[FetchedEvidence]
    ) -> None:
        """Work in the server's session ``session_id``; ``fetched`` is what the client kept of earlier calls."""
        self.server = server
        self.session_id = session_id
        self.scope = scope
        self._fetched = {item.id: item for item in fetched}

    @classmethod
    @contextmanager
    def opened(
        cls, server: ServerClient, scope: EvidenceScope, fetched: Sequence[FetchedEvidence]
    ) -> Iterator[ServedEvidenceSession]:
        """A new server session for the block, ended after it."""
        session_id, _ = server.open_session(scope.document_ids, [item.id for item in fetched])
        try:
            yield cls(server, session_id, scope, fetched)
        finally:
            server.close_session(session_id)

    @property
    def fetched(self) -> dict[str, FetchedEvidence]:
        """The evidence read in this session and before it, by id (what the session file keeps)."""
        return dict(self._fetched)

    def discover(self, query: str, mode: str = "graph", limit: int = 10) -> DiscoverResult:
        """See ``EvidenceSession.discover``."""
        require_text(query)  # as in-process, before the query travels
        result: DiscoverResult = self._call("discover", query=query, mode=str(mode), limit=limit)
        return result

    def fetch(self, ids: Iterable[str]) -> FetchResult:
        """See ``EvidenceSession.fetch``."""
        return self._read(self._call("fetch", ids=list(ids)))

    def navigate(self, evidence_id: str, direction: str) -> FetchResult:
        """See ``EvidenceSession.navigate``."""
        return self._read(self._call("navigate", id=evidence_id, direction=str(direction)))

    def find_entities(self, query: str, limit: int = 10) -> tuple[EntityEvidence, ...]:
        """See ``EvidenceSession.find_entities``."""
        require_text(query)
        found: tuple[EntityEvidence, ...] = self._call("find_entities", query=query, limit=limit)
        return found

    def explore(
        self, entity: str, depth: int = 1, relation_types: Sequence[str] | None = None, limit: int = 50
    ) -> ExploreResult:
        """See ``EvidenceSession.explore``."""
        types = None if relation_types is None else list(relation_types)
        result: ExploreResult = self._call("explore", entity=entity, depth=depth, relation_types=types, limit=limit)
        return result

    def check_citations(self, answer: str) -> CitationCheck:
        """See ``EvidenceSession.check_citations``."""
        check: CitationCheck = self._call("check_citations", answer=answer)
        return check

    def render_citations(self, answer: str) -> RenderedAnswer:
        """See ``EvidenceSession.render_citations``."""
        rendered: RenderedAnswer = self._call("render_citations", answer=answer)
        return rendered

    def _call(self, tool: str, **arguments: Any) -> Any:
        return self.server.call(self.session_id, tool, {k: v for k, v in arguments.items() if v is not None})

    def _read(self, result: FetchResult) -> FetchResult:
        for item in result.items:
            self._fetched[item.id] = item
        return result
