"""``KnowledgeStore``: the graph store and the two vector collections that together hold one knowledge graph."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from types import TracebackType

from agrag.components.data_models.resolution import MergeLogEntry
from agrag.components.data_models.retirement import Retirement
from agrag.components.disk_space_errors import COMMITTED_STAYS
from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.components.stores.disk_space import DiskSpace
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.json_ontology_store import JsonOntologyStore
from agrag.components.stores.read_write_lock import ReadWriteLock
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.store_registry import unregister_store
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_store import CURRENT, STATUS_FIELD, SUPERSEDED, VectorCollection, VectorStore


@dataclass
class KnowledgeStore:
    """The stores of one data dir: Kùzu for the graph, Qdrant for chunk, entity and community report vectors.

    ``journal`` holds the phase markers of unfinished ingestion runs (see ``SqlitePhaseJournal``); ``ontology`` the
    labels and relation patterns ``set_ontology`` added to the configured ontology (see ``JsonOntologyStore``).

    Readers and the writer of one process share the stores through ``reading()`` and ``writing()``, one
    writer-preferring ``ReadWriteLock`` (``rw_lock``): a request (search, evidence call, status) holds ``reading()``
    for its whole duration, so it sees one committed state; ingestion holds ``writing()`` only around one commit
    batch (the chunks, vectors, entities, links and resolution decisions of a slice of whole documents, then their
    commit), never around loading, extraction, embedding or LLM calls; deletes and merge undos write under it too.
    The store adapters never take it themselves.

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
    ontology: JsonOntologyStore | None = None
    rw_lock: ReadWriteLock = field(default_factory=ReadWriteLock)
    spec: StoreSpec | None = None  # how another process opens this data dir (serialized pipelines hold it)
    space: DiskSpace | None = None  # the data dir's disk: every write first checks its free space

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the read side for a whole request: no commit batch is half-written while it runs.

        Readers share it; a reader waits at most for the one commit batch being written (a writer that waits keeps
        new readers out, and readers that waited go before its next batch). Reentrant; a thread inside
        ``writing()`` may also read.
        """
        with self.rw_lock.read():
            yield

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the write side around one short commit batch (or a delete, or a merge undo), alone.

        Hold it only around store writes, never around slow work (loading, extraction, embedding, LLM calls):
        every request waits while it is held. Reentrant. A thread that holds ``reading()`` cannot take it
        (``RuntimeError``). Taking it checks the disk first: ``NoSpaceLeftError`` when less than ``space.min_free``
        is free, before anything is written.
        """
        outermost = not self.rw_lock.write_held
        with self.rw_lock.write():
            if outermost and self.space is not None:
                self.space.require_to_write("write to the data dir")
            yield

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the write side without writing (to close the stores once requests end): no disk check."""
        with self.rw_lock.write():
            yield

    def require_room(self, needed: int, doing: str, kept: str = COMMITTED_STAYS) -> None:
        """Refuse ``doing`` with ``NoSpaceLeftError`` unless the disk has ``needed`` bytes free above ``min_free``.

        For a stage that writes more than one commit batch can (a whole write stage, indexing, a repair), before it
        starts; ``kept`` says what stays (the message's middle sentence).
        """
        if self.space is not None:
            self.space.require_to_write(doing, needed, kept)

    def vectors(self, collection: VectorCollection) -> VectorStore:
        """The open vector store of ``collection``."""
        stores = {
            VectorCollection.CHUNKS: self.chunks,
            VectorCollection.ENTITIES: self.entities,
            VectorCollection.COMMUNITIES: self.communities,
        }
        return stores[collection]

    def counts(self) -> dict[str, int]:
        """Rows per graph table and points per vector collection."""
        counts = dict(self.graph.counts())
        counts["chunk_vectors"] = self.chunks.count()
        counts["entity_vectors"] = self.entities.count()
        counts["community_vectors"] = self.communities.count()
        return counts

    def retire_chunks(self, chunk_ids: Sequence[str], keep: Collection[str] = ()) -> Retirement:
        """Take what only these chunks supported out of the graph and out of search (idempotent), under ``writing()``.

        The chunks stay readable, marked superseded. Entities in ``keep`` stay (text still to be written names them).
        """
        with self.writing():
            # section chunks are never embedded, so only the points that exist are marked
            self.chunks.set_payload(sorted(self.chunks.existing_ids(list(chunk_ids))), {STATUS_FIELD: SUPERSEDED})
            retirement = self.graph.retire_chunks(chunk_ids, keep)
            self.entities.delete(list(retirement.removed))
        return retirement

    def undo_merge(self, key: str) -> list[MergeLogEntry]:
        """Undo a merge (by log id or member entity id), under ``writing()``: the member is an entity again, searchable.

        Raises:
            MergeNotFoundError: no active merge has this id.
        """
        with self.writing():
            undone = self.graph.undo_merge(key)
            self.entities.set_payload([e.member_id for e in undone], {STATUS_FIELD: CURRENT})
        return undone

    def close(self) -> None:
        """Close every store, even if one of them fails to close.

        Waits for the write side first, so a commit batch being written and the requests being served end before
        the stores close.
        """
        unregister_store(self)  # no component may resolve its spec to stores being closed
        with self.exclusive(), ExitStack() as closing:  # not writing(): closing needs no free space
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
