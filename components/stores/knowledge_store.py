"""``KnowledgeStore``: the graph store and the two vector collections that together hold one knowledge graph."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from types import TracebackType

from agrag.components.data_models.resolution import MergeLogEntry
from agrag.components.data_models.retirement import Retirement
from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.vector_store import CURRENT, STATUS_FIELD, SUPERSEDED, VectorStore


@dataclass
class KnowledgeStore:
    """The stores of one data dir: Kùzu for the graph, Qdrant for chunk, entity and community report vectors.

    ``journal`` holds the phase markers of unfinished ingestion runs (see ``SqlitePhaseJournal``).

    Usage:
        ```python
        with open_knowledge_store(settings, config.vector_store, dimension=384) as store:
            print(store.counts())
        ```
    """

    graph: GraphStore
    chunks: VectorStore
    entities: VectorStore
    communities: VectorStore
    lock: DataDirLock | None = None
    journal: SqlitePhaseJournal | None = None

    def counts(self) -> dict[str, int]:
        """Rows per graph table and points per vector collection."""
        counts = dict(self.graph.counts())
        counts["chunk_vectors"] = self.chunks.count()
        counts["entity_vectors"] = self.entities.count()
        counts["community_vectors"] = self.communities.count()
        return counts

    def retire_chunks(self, chunk_ids: Sequence[str]) -> Retirement:
        """Take what only these chunks supported out of the graph and out of search (idempotent).

        The chunks stay readable, marked superseded.
        """
        # section chunks are never embedded, so only the points that exist are marked
        self.chunks.set_payload(sorted(self.chunks.existing_ids(list(chunk_ids))), {STATUS_FIELD: SUPERSEDED})
        retirement = self.graph.retire_chunks(chunk_ids)
        self.entities.delete(list(retirement.removed))
        return retirement

    def undo_merge(self, key: str) -> list[MergeLogEntry]:
        """Undo a merge (by log id or member entity id): the member is an entity of its own again, searchable too.

        Raises:
            MergeNotFoundError: no active merge has this id.
        """
        undone = self.graph.undo_merge(key)
        self.entities.set_payload([e.member_id for e in undone], {STATUS_FIELD: CURRENT})
        return undone

    def close(self) -> None:
        """Close every store, even if one of them fails to close."""
        with ExitStack() as closing:
            if self.lock is not None:
                closing.callback(self.lock.release)  # runs last: the stores are closed before another may open
            closing.callback(self.graph.close)
            if self.journal is not None:
                closing.callback(self.journal.close)
            closing.callback(self.communities.close)
            closing.callback(self.entities.close)
            closing.callback(self.chunks.close)

    def __enter__(self) -> KnowledgeStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
