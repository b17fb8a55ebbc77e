"""``LedgerSession``: an evidence session whose ledger of read evidence holds at most ``capacity`` items.

An MCP client may read for hours in one connection; the ledger (what citations are checked against) keeps the most
recently read items, drops the oldest first, and says how many it dropped so the reply can tell the client.
"""

from __future__ import annotations

from collections.abc import Iterable

from agrag.components.data_models.evidence import EvidenceScope, FetchedEvidence
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import EvidenceError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.evidence_session import EvidenceSession, GraphPassageSearch
from agrag.service.mcp.ledger_limits import DEFAULT_LEDGER_CAPACITY


class LedgerSession(EvidenceSession):
    """An ``EvidenceSession`` with a bounded ledger, and a way to forget evidence a client never received.

    Usage:
        ```python
        session = LedgerSession(runtime.store, runtime.embedder, capacity=500, graph_search=runtime.graph_passages)
        session.fetch(ids)
        dropped = session.take_dropped()  # ids pushed out of the ledger by that read, oldest first
        ```
    """

    def __init__(
        self,
        store: KnowledgeStore,
        embedder: SentenceTransformersTextEmbedder,
        scope: EvidenceScope | None = None,
        capacity: int = DEFAULT_LEDGER_CAPACITY,
        graph_search: GraphPassageSearch | None = None,
    ) -> None:
        """Read ``store`` within ``scope``, keeping at most ``capacity`` read items for citations.

        ``graph_search`` serves ``discover``'s ``graph`` mode (``Runtime.graph_passages``).

        Raises:
            EvidenceError: ``capacity`` below 1.
        """
        if capacity < 1:
            raise EvidenceError(f"The ledger capacity must be at least 1, got {capacity}.")
        super().__init__(store, embedder, scope, graph_search=graph_search)
        self.capacity = capacity
        self._dropped: list[str] = []

    def _remember(self, items: Iterable[FetchedEvidence]) -> None:
        for item in items:
            self._fetched.pop(item.id, None)  # read again: it becomes the newest
            self._fetched[item.id] = item
        while len(self._fetched) > self.capacity:
            oldest = next(iter(self._fetched))
            del self._fetched[oldest]
            self._dropped.append(oldest)

    def forget(self, ids: Iterable[str]) -> None:
        """Drop evidence from the ledger, e.g. read by a call whose reply was cut before it reached the client."""
        for evidence_id in ids:
            self._fetched.pop(evidence_id, None)

    def take_dropped(self) -> tuple[str, ...]:
        """The ids pushed out of the ledger by capacity since the last call, oldest first."""
        dropped, self._dropped = tuple(self._dropped), []
        return dropped
