"""``KnowledgeStore``: the graph store and the vector collections that together hold one knowledge graph."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from types import TracebackType

from agrag.components.data_models.resolution import MergeLogEntry
from agrag.components.data_models.retirement import Retirement
from agrag.components.disk_space_errors import COMMITTED_STAYS
from agrag.components.embedders.embedding_texts import fact_keyword_text
from agrag.components.errors import StoreError
from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.components.stores.disk_space import DiskSpace
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.json_ontology_store import JsonOntologyStore
from agrag.components.stores.pending_vectors import PendingVectors
from agrag.components.stores.read_write_lock import ReadWriteLock
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.store_registry import unregister_store
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_payloads import CHUNK_IDS, fact_payload
from agrag.components.stores.vector_store import (
    CURRENT,
    MERGED_STATUS,
    PENDING,
    STATUS_FIELD,
    SUPERSEDED,
    PayloadFilter,
    VectorCollection,
    VectorPoint,
    VectorStore,
)

PENDING_ONLY = PayloadFilter(((STATUS_FIELD, PENDING),))
FACT_SLICE = 500  # fact points settled at a time (read with their vectors, written again with their passages)


@dataclass
class KnowledgeStore:
    """The stores of one data dir: Kùzu for the graph, Qdrant for chunk, entity, community report and fact vectors.

    A fact point mirrors one relation of the graph while a current passage states it: its payload names those
    passages and their documents (what a document scope filters on), and it is settled from the graph after every
    commit that wrote the relation or retired one of its passages (``settle_facts``); one that no current passage
    states any more is deleted.

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
    facts: VectorStore
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
            VectorCollection.FACTS: self.facts,
        }
        return stores[collection]

    def counts(self) -> dict[str, int]:
        """Rows per graph table and points per vector collection."""
        counts = dict(self.graph.counts())
        counts["chunk_vectors"] = self.chunks.count()
        counts["entity_vectors"] = self.entities.count()
        counts["community_vectors"] = self.communities.count()
        counts["fact_vectors"] = self.facts.count()
        return counts

    @contextmanager
    def committing(self) -> Iterator[PendingVectors]:
        """Write one commit alone, its vector changes pending (found by no search) until the graph has committed.

        Holds ``writing()``. The body writes the graph and ends with the graph's commit, one statement that Kùzu
        commits whole (``commit_documents``, ``delete_document``...): until it, no read sees the new chunks. Vector
        changes go through the yielded ``PendingVectors`` and are applied after the body. Should the body fail, the
        points it made pending get what the graph holds; should the process die, the next open does that
        (``settle_pending``). Not nested.

        Why not one Kùzu transaction: Kùzu 0.11.3 wrote a batch's new MENTIONS links to the wrong entities inside a
        multi-statement write transaction, in a graph reopened after links were deleted.
        """
        with self.writing():
            pending = PendingVectors(self.chunks, self.entities, self.facts, self.settle_facts)
            try:
                yield pending
            except BaseException:
                with suppress(StoreError):  # what this cannot settle, the next open does
                    self._settle(pending.ids(VectorCollection.CHUNKS), pending.ids(VectorCollection.ENTITIES))
                    self.settle_facts(pending.ids(VectorCollection.FACTS))
                raise
            pending.apply()

    def settle_pending(self) -> int:
        """Give every pending vector point the status the graph holds for it; return how many there were.

        Points are pending only while a commit is written (``committing``), so any found when the data dir is opened
        belong to a process that died inside one. Each gets its status from the graph: a chunk the graph holds as
        committed becomes current or superseded as it says, an entity merged, or current while a current chunk names
        it; a point of what the graph never committed is deleted (the run started again writes it again, as it
        writes the uncommitted chunks the graph keeps, which no read sees).
        """
        with self.reading():  # every open asks, so asking must need no free space (reads work on a full disk)
            chunk_ids = self.chunks.matching_ids(PENDING_ONLY)
            entity_ids = self.entities.matching_ids(PENDING_ONLY)
            fact_ids = self.facts.matching_ids(PENDING_ONLY)
        if chunk_ids or entity_ids or fact_ids:
            with self.writing():
                self._settle(chunk_ids, entity_ids)
                self.settle_facts(fact_ids)
        return len(chunk_ids) + len(entity_ids) + len(fact_ids)

    def settle_facts(self, fact_ids: Sequence[str]) -> None:
        """Give each of these fact points what the graph holds now: the current passages that state its relation.

        A point whose relation some current passage states is written again, current, with the fact as the graph
        holds it (its records' names, its sentence, those passages and their documents: what ``agrag repair`` and
        ``migrate-vectors`` write) and its vector; one whose relation is gone, or stated by no current passage, is
        deleted. Called
        after a commit's graph statements (``PendingVectors.apply``) and when a data dir is opened with points a
        killed commit left pending; the caller holds ``writing()``.
        """
        ids = sorted(set(fact_ids))
        if not ids:
            return
        for start in range(0, len(ids), FACT_SLICE):
            points = self.facts.fetch(ids[start : start + FACT_SLICE], with_vectors=True)
            stated = self.graph.stated_facts([(p.id, str(p.payload.get("source_id", ""))) for p in points])
            kept = [
                VectorPoint(p.id, p.dense, fact_keyword_text(stated[p.id]), fact_payload(stated[p.id]))
                for p in points
                if p.id in stated
            ]
            self.facts.upsert(kept)
            self.facts.delete(sorted({p.id for p in points} - stated.keys()))

    def write_facts(self, pending: PendingVectors, points: Sequence[VectorPoint], incoming: Sequence[str]) -> None:
        """Write a commit's fact points as they will be once its last graph statement has run: one write each.

        Called right before that statement, once the commit's relations are written and its older chunks retired:
        each of ``points`` (the facts of the relations it wrote) and each fact point it touched (``touch_facts``) is
        read from the graph with ``incoming`` (its chunks) counted current, and written pending with the fact as the
        graph will hold it, to turn current when applied; one no passage will state is deleted then. The alternative,
        settling after the commit (``settle_facts``), writes each point twice. A kill before the commit leaves them
        pending, and the next open settles them from the graph (whose chunks of this commit are not committed).
        """
        new = {p.id: (p.dense, p.payload) for p in points}
        touched = [i for i in pending.facts_from_graph() if i not in new]
        stored = {p.id: (p.dense, p.payload) for p in self.facts.fetch(touched, with_vectors=True)} if touched else {}
        written = {**new, **stored}
        if not written:
            return
        asked = [(i, str(payload.get("source_id", ""))) for i, (_, payload) in written.items()]
        stated = self.graph.stated_facts(asked, incoming)
        final = [
            VectorPoint(i, dense, fact_keyword_text(stated[i]), fact_payload(stated[i]))
            for i, (dense, _) in written.items()
            if i in stated
        ]
        pending.add(VectorCollection.FACTS, final, as_written=True)
        gone = sorted(self.facts.existing_ids([i for i in written if i not in stated]))
        pending.change(VectorCollection.FACTS, gone, None)

    def facts_of(self, chunk_ids: Sequence[str] = (), entity_ids: Sequence[str] = ()) -> list[str]:
        """The stored fact points that these chunks state, or that start or end at these entity records, by id."""
        found: set[str] = set()
        if chunk_ids:
            found.update(self.facts.matching_ids(PayloadFilter(((CHUNK_IDS, tuple(chunk_ids)),))))
        for end in ("source_id", "target_id") if entity_ids else ():
            found.update(self.facts.matching_ids(PayloadFilter(((end, tuple(entity_ids)),))))
        return sorted(found)

    def _settle(self, chunk_ids: Sequence[str], entity_ids: Sequence[str]) -> None:
        current = {c.id: c.current for c in self.graph.get_chunks(chunk_ids)} if chunk_ids else {}
        self.chunks.set_payload([i for i in chunk_ids if current.get(i) is True], {STATUS_FIELD: CURRENT})
        self.chunks.set_payload([i for i in chunk_ids if current.get(i) is False], {STATUS_FIELD: SUPERSEDED})
        self.chunks.delete([i for i in chunk_ids if i not in current])  # get_chunks reads committed chunks only
        resolved = self.graph.resolved_ids(entity_ids) if entity_ids else {}
        merged = [i for i in entity_ids if resolved.get(i, i) != i]
        self.entities.set_payload(merged, {STATUS_FIELD: MERGED_STATUS})
        kept = [i for i in entity_ids if resolved.get(i) == i]
        supported = self.graph.supporting_chunk_ids(kept, limit=1) if kept else {}
        self.entities.set_payload([i for i in kept if supported.get(i)], {STATUS_FIELD: CURRENT})
        self.entities.delete([i for i in entity_ids if i not in resolved or (i in kept and not supported.get(i))])

    def retire_chunks(
        self,
        chunk_ids: Sequence[str],
        keep: Collection[str] = (),
        pending: PendingVectors | None = None,
        incoming: Sequence[str] = (),
    ) -> Retirement:
        """Take what only these chunks supported out of the graph and out of search (idempotent).

        The chunks stay readable, marked superseded. Entities in ``keep`` stay (text still to be written names them),
        and so do those the uncommitted chunks ``incoming`` name. Part of the commit of ``pending`` (see
        ``committing``), written before its graph commit; else a commit of its own.
        """
        if pending is None:
            with self.committing() as own:
                return self.retire_chunks(chunk_ids, keep, own, incoming)
        # section chunks are never embedded, so only the points that exist are marked
        pending.change(VectorCollection.CHUNKS, sorted(self.chunks.existing_ids(list(chunk_ids))), SUPERSEDED)
        pending.touch_facts(self.facts_of(chunk_ids))
        retirement = self.graph.retire_chunks(chunk_ids, keep, incoming)
        removed = sorted(self.entities.existing_ids(list(retirement.removed)))
        pending.change(VectorCollection.ENTITIES, removed, None)
        pending.touch_facts(self.facts_of(entity_ids=retirement.removed))
        return retirement

    def undo_merge(self, key: str) -> list[MergeLogEntry]:
        """Undo a merge (by log id or member entity id), in one commit: the member is an entity again, searchable.

        Raises:
            MergeNotFoundError: no active merge has this id.
        """
        with self.committing() as pending:
            undone = self.graph.undo_merge(key)
            members = sorted(self.entities.existing_ids([e.member_id for e in undone]))
            pending.change(VectorCollection.ENTITIES, members, CURRENT)
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
            closing.callback(self.facts.close)
            closing.callback(self.communities.close)
            closing.callback(self.entities.close)
            closing.callback(self.chunks.close)

    def __enter__(self) -> KnowledgeStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
