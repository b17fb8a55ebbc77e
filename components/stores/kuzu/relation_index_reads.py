"""``KuzuRelationIndexReads``: the graph's relations read as columns into a ``RelationIndex``, once per write count."""

from __future__ import annotations

import logging
import threading
import time
from contextlib import suppress

import kuzu
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from agrag.components.data_models.relation_index_mode import RelationIndexMode
from agrag.components.errors import StoreError
from agrag.components.graph.relation_index import RelationColumns, RelationIndex
from agrag.components.stores.heap import release_free_heap
from agrag.components.stores.kuzu.arrow_rows import release_arrow_memory
from agrag.components.stores.kuzu.connection import KuzuConnection
from agrag.components.stores.kuzu.retrieval_cypher import INDEX_RECORDS, INDEX_RELATIONS
from agrag.components.stores.large_builds import LARGE_BUILDS

_log = logging.getLogger(__name__)


class KuzuRelationIndexReads(KuzuConnection):
    """Keeps a ``RelationIndex`` of the graph as of one write count, for walks from the store's own process.

    Built from two column reads (every entity record, every relation's ends, offset, support, type and id): at
    1,000,000 chunks about 5 million relations, read in seconds. ``background`` (a server's) builds on one thread
    of the store's, once the writes have paused for a second and for as long as the last build took, so no walk waits
    for it and an ingestion's commit batches do not make it rebuild after each; until it is ready walks read the
    store as before. ``inline`` builds in the walk (what tests use, to walk with it every time); ``off`` (a short
    command's) walks with the hop statements.
    """

    relation_index_mode = RelationIndexMode.OFF
    """``background`` in a long-lived process (``Runtime.serve_long``: ``agrag serve``, ``agrag mcp``)."""
    relation_index_quiet_seconds = 1.0
    """How long the write count must hold still before a background build starts."""
    _relation_index: tuple[int, RelationIndex] | None = None
    _index_wanted: threading.Event | None = None
    _index_lock = threading.Lock()
    _index_reader: kuzu.Connection | None = None  # the builder thread's connection, interrupted by ``close``
    _index_building = False

    def close(self) -> None:
        """Stop a background build in flight (at 1,000,000 chunks its reads take seconds), then close the store."""
        self._index_building = False
        reader = self._index_reader
        if reader is not None:
            with suppress(RuntimeError):
                reader.interrupt()
        super().close()

    def _current_relation_index(self) -> tuple[int, RelationIndex] | None:
        """The index and its write count if it is of the graph as it is now; asks for one otherwise."""
        writes = self._write_count()
        held = self._relation_index
        if held is not None and held[0] == writes:
            return held
        mode = self.relation_index_mode
        if mode is RelationIndexMode.INLINE:
            built = (writes, self._read_relation_index())
            self._relation_index = built
            return built if self._write_count() == writes else None
        if mode is RelationIndexMode.BACKGROUND:
            self._want_relation_index()
        return None

    def _read_relation_index(self) -> RelationIndex:
        """Read the graph as columns and index it (an empty graph gives an empty index); one large build at a time."""
        with LARGE_BUILDS:
            try:
                return RelationIndex(self._relation_columns())
            finally:
                release_arrow_memory()
                release_free_heap()

    def _relation_columns(self) -> RelationColumns:
        records = self._arrow(INDEX_RECORDS)
        ids: list[str] = records.column("id").to_pylist()
        merged = records.column("m").to_pylist()
        # A record merged into an id no record has still resolves there (a walk reaches that id), so it gets a place.
        known = {record: n for n, record in enumerate(ids)}
        for target in merged:
            if target and target not in known:
                known[target] = len(ids)
                ids.append(target)
        resolved = np.arange(len(ids), dtype=np.int32)
        for n, target in enumerate(merged):
            if target:
                resolved[n] = known[target]
        del known
        node_offsets = records.column("o").to_numpy()
        position = np.full(int(node_offsets.max()) + 1 if len(node_offsets) else 0, -1, dtype=np.int32)
        position[node_offsets] = np.arange(len(node_offsets), dtype=np.int32)
        del records
        relations = self._arrow(INDEX_RELATIONS)
        order = pc.sort_indices(relations, sort_keys=[("s", "descending"), ("i", "ascending")]).to_numpy()
        relations = relations.drop_columns(["s", "i"])  # the ids only ranked the relations: freed before the index
        release_arrow_memory()
        types = pc.dictionary_encode(relations.column("t").combine_chunks())
        assert isinstance(types, pa.DictionaryArray)
        return RelationColumns(
            record_ids=ids,
            resolved=resolved,
            source=position[relations.column("a").to_numpy()],
            target=position[relations.column("b").to_numpy()],
            offsets=relations.column("o").to_numpy(),
            types=types.indices.to_numpy(zero_copy_only=False),
            type_names=types.dictionary.to_pylist(),
            order=order,
        )

    def _want_relation_index(self) -> None:
        with self._index_lock:
            if self._index_wanted is None:
                self._index_wanted = threading.Event()
                threading.Thread(target=self._build_relation_indexes, name="relation-index", daemon=True).start()
            self._index_wanted.set()

    def _build_relation_indexes(self) -> None:
        """The builder thread: on each request, wait for the writes to pause, build, keep it if nothing changed."""
        wanted = self._index_wanted
        assert wanted is not None
        took = 0.0  # the last build's seconds: writes must pause that long too, or builds would chase an ingestion
        while not self._closed:
            if not wanted.wait(timeout=5.0):
                continue
            wanted.clear()
            writes = self._write_count()
            while True:
                time.sleep(max(self.relation_index_quiet_seconds, took))
                if self._closed:
                    return
                now = self._write_count()
                if now == writes:
                    break
                writes = now
            held = self._relation_index
            if held is not None and held[0] == writes:
                continue
            started = time.monotonic()
            try:
                self._run("RETURN 1")  # makes this thread's connection, for ``close`` to interrupt
                self._index_reader = self._local.conn
                self._index_building = True
                index = self._read_relation_index()
            except StoreError as exc:
                if self._closed or not self._index_building:
                    return
                _log.warning("The relation index of %s was not built (%s); walks read the store.", self._path, exc)
                continue
            finally:
                self._index_building = False
            took = time.monotonic() - started
            if self._write_count() == writes:
                self._relation_index = (writes, index)
                _log.info("Relation index: %d relations in %.1f s.", len(index), took)
