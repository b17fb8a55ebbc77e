"""``KuzuConnection``: the one Kùzu database of a file, its connections, the statement lock and the schema.

The base every role of ``KuzuGraphStore`` builds on: reads on the calling thread's connection, writes one at a time
on the write connection, statements batched, parameters checked, backend errors wrapped.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import kuzu
import pyarrow as pa

from agrag.components.disk_space_errors import NOTHING_CHANGED
from agrag.components.errors import ConfigError, StoreError, StoreLockedError
from agrag.components.stores.disk_space import READ_MARGIN, DiskSpace, is_disk_full
from agrag.components.stores.graph_store import GENERATION_KEY
from agrag.components.stores.kuzu import schema_cypher as cy
from agrag.components.stores.kuzu.arrow_rows import arrow_columns, columns_of, release_arrow_memory
from agrag.components.stores.kuzu_open_check import KuzuOpenCheck
from agrag.components.stores.read_write_lock import ReadWriteLock

PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
# Kùzu 0.11.3 reads past the end of its sorted rows, and can crash the process (SIGSEGV), when an ORDER BY ... SKIP
# ... LIMIT skips past the last row by a whole sort block (a few thousand rows; fewer the wider the sort keys): its
# top-k scanner builds a pointer to row SKIP without checking that the row exists. So a statement that skips runs
# only through ``_run_page``, which never sends a SKIP beyond the rows.
SKIP = re.compile(r"\bSKIP\b", re.IGNORECASE)
# Kùzu copies every row of an UNWIND list into one transaction; batches keep memory flat on large folders.
_BATCH = 2000
_ARROW_CHUNK = 1_000_000  # rows per Arrow record batch of a columnar read
MB = 1024 * 1024


def scope_params(scope: Sequence[str] | None) -> dict[str, Any]:
    """The ``$any_doc`` and ``$docs`` parameters of a document scope (None: every document)."""
    if isinstance(scope, str):  # a lone id would read as a scope of its characters
        raise TypeError("A document scope is a sequence of document ids, not one id.")
    return {"any_doc": scope is None, "docs": sorted(set(scope or ()))}


class KuzuConnection:
    """The database file, its connections and the statement lock that every role of the Kùzu store shares.

    See ``KuzuGraphStore`` for the concurrency rules; the role mixins call only ``_run`` (a read), ``_write``,
    their batched forms, ``_records`` and ``_bump_generation``.
    """

    def __init__(self, path: Path, buffer_pool_mb: int | None = None, *, read_only: bool = False) -> None:
        """Open (or create) the database file at ``path`` and its schema (see ``KuzuGraphStore``)."""
        if buffer_pool_mb is not None and buffer_pool_mb < 1:
            raise ConfigError(
                f"The Kùzu buffer pool must be at least 1 MB, got {buffer_pool_mb} (AGRAG_KUZU_BUFFER_POOL_MB); "
                "leave it unset for Kùzu's default or give a size in MB, e.g. 1024."
            )
        self._path = Path(path)
        self._buffer_pool_mb = buffer_pool_mb
        self._statements = ReadWriteLock()  # shared by read statements, exclusive for write statements
        self._local = threading.local()  # the calling thread's read connection
        self._readers: list[kuzu.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self._writes = 0  # write statements committed through this store (see _write_count)
        self._transaction = False  # the write connection is inside transaction()
        self._table_columns: dict[str, list[tuple[str, str]]] = {}  # (name, type) per table, for bulk copies
        self._open_check = None if read_only else KuzuOpenCheck(self._path, buffer_pool_mb)
        if self._open_check is not None:
            self._open_check.run()
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._db = kuzu.Database(str(self._path), buffer_pool_size=(buffer_pool_mb or 0) * MB, read_only=read_only)
            self._conn = kuzu.Connection(self._db)  # the write connection
        except RuntimeError as exc:
            if is_disk_full(exc):  # replaying a log left by a killed writer writes
                raise DiskSpace(self._path.parent).ran_out("open the graph", NOTHING_CHANGED, READ_MARGIN) from exc
            if "lock" in str(exc).lower():
                raise StoreLockedError(
                    f"The graph store {self._path} is in use by another process. Stop the other agrag process "
                    "(ingest or server) or point AGRAG_DATA_DIR elsewhere."
                ) from exc
            raise StoreError(f"Could not open the Kùzu database {self._path}: {exc}") from exc
        try:
            for statement in () if read_only else self._missing_schema():
                self._write(statement)
        except StoreError:
            self.close()  # the file stays locked by this process until the database is closed
            raise

    def _missing_schema(self) -> list[str]:
        """The ``SCHEMA`` statements whose table or column does not exist yet, in order.

        Only those run: even a statement that changes nothing (``IF NOT EXISTS``) makes Kùzu rewrite the file's
        header when it closes, and a command that only reads must leave the file as it found it.
        """

        def records(query: str) -> list[dict[str, Any]]:  # on the write connection: no thread's reader is made
            names, rows = self._execute(query, write=True)
            return [dict(zip(names, row, strict=True)) for row in rows]

        tables = {t["name"].lower() for t in records(cy.SHOW_TABLES)}
        columns: dict[str, set[str]] = {}
        missing = []
        for statement in cy.SCHEMA:
            made = cy.schema_object(statement)
            if made is None or made[0].lower() not in tables:
                missing.append(statement)
                continue
            table, column = made
            if column is None:
                continue
            if table not in columns:
                columns[table] = {c["name"].lower() for c in records(cy.table_info(table))}
            if column.lower() not in columns[table]:
                missing.append(statement)
        return missing

    def _run(self, query: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        """Run a read statement on the calling thread's connection; return its rows."""
        return self._execute(query, params, write=False)[1]

    def _run_page(self, query: str, count: str, params: Mapping[str, Any]) -> list[list[Any]]:
        """Run a paged read (``... SKIP $skip LIMIT $limit``) whose SKIP never passes its last row; return its rows.

        ``count`` counts the rows ``query`` pages through (same ``MATCH`` and ``WHERE``, same parameters). When
        ``$skip`` is at or past that count the page is empty and ``query`` is not run. Both statements run under
        one hold of the statement lock, so no write commits between the count and the page.
        """
        skip = params["skip"]
        counted = {name: params[name] for name in PARAM.findall(count)}  # Kùzu refuses a parameter it does not use
        with self._statements.read():
            if skip and skip >= self._execute(count, counted)[1][0][0]:
                return []
            return self._execute(query, params, paged=True)[1]

    def _write(self, query: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        """Run a statement that writes (or a read that belongs to a write) on the write connection."""
        return self._execute(query, params, write=True)[1]

    def _execute(
        self, query: str, params: Mapping[str, Any] | None = None, *, write: bool = False, paged: bool = False
    ) -> tuple[list[str], list[list[Any]]]:
        given = dict(params or {})
        missing = set(PARAM.findall(query)) - given.keys()
        if missing:  # an unbound $param can crash the Kùzu process instead of raising
            raise StoreError(f"Internal error: Cypher parameters {sorted(missing)} are not bound.")
        if not paged and SKIP.search(query):  # see SKIP: a skip past the last row can crash the process
            raise StoreError("Internal error: a statement with SKIP must run through _run_page.")
        try:
            with self._statements.write() if write else self._statements.read():
                if self._closed:
                    raise StoreError(f"The graph store {self._path} is closed.")
                result = (self._conn if write else self._reader()).execute(query, given)
                if write:  # a write statement commits when it returns: count it while still holding the lock
                    self._writes += 1
                if not isinstance(result, kuzu.QueryResult):
                    return [], []
                columns, rows = list(result.get_column_names()), result.get_all()
        except RuntimeError as exc:
            if is_disk_full(exc):  # Kùzu rolls the statement back: what was committed stays
                raise DiskSpace(self._path.parent).ran_out("write the graph" if write else "query the graph") from exc
            raise StoreError(f"Kùzu query failed on {self._path}: {exc}{self._hint(exc)}") from exc
        return columns, [list(row) for row in rows]

    def _arrow(self, query: str) -> pa.Table:
        """Run a read statement without parameters on the calling thread's connection; return its rows as columns."""
        try:
            with self._statements.read():
                if self._closed:
                    raise StoreError(f"The graph store {self._path} is closed.")
                result = self._reader().execute(query)
                assert isinstance(result, kuzu.QueryResult)
                return result.get_as_arrow(chunk_size=_ARROW_CHUNK)
        except RuntimeError as exc:
            raise StoreError(f"Kùzu query failed on {self._path}: {exc}{self._hint(exc)}") from exc

    def _reader(self) -> kuzu.Connection:
        """The calling thread's read connection, made on its first read (the caller holds the statement lock)."""
        if self._closed:
            raise StoreError(f"The graph store {self._path} is closed.")
        conn: kuzu.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = kuzu.Connection(self._db)
            with self._readers_lock:
                self._readers.append(conn)
            self._local.conn = conn
        return conn

    def _hint(self, exc: RuntimeError) -> str:
        """How to get past a failure, when the message alone does not say."""
        if "buffer pool is full" in str(exc):
            size = f"{self._buffer_pool_mb} MB" if self._buffer_pool_mb else "Kùzu's default size"
            return f". The buffer pool ({size}) is too small: raise AGRAG_KUZU_BUFFER_POOL_MB."
        return ""

    def _records(self, query: str) -> list[dict[str, Any]]:
        columns, rows = self._execute(query)
        return [dict(zip(columns, row, strict=True)) for row in rows]

    def _run_batched(self, query: str, key: str, rows: Sequence[Any], **extra: Any) -> list[list[Any]]:
        return [row for batch in self._batches(query, key, rows, **extra) for row in batch]

    def _batches(self, query: str, key: str, rows: Sequence[Any], **extra: Any) -> Iterator[list[list[Any]]]:
        """``query`` run on ``rows`` a batch at a time, each batch's result as it comes (none held for the next)."""
        for start in range(0, len(rows), _BATCH):
            yield self._run(query, {key: list(rows[start : start + _BATCH]), **extra})

    def _write_batched(self, query: str, key: str, rows: Sequence[Any], **extra: Any) -> list[list[Any]]:
        returned: list[list[Any]] = []
        for start in range(0, len(rows), _BATCH):
            returned += self._write(query, {key: list(rows[start : start + _BATCH]), **extra})
        return returned

    def _upsert_each(self, find: str, create: str | None, rows: Sequence[Mapping[str, Any]]) -> None:
        """Write ``rows`` one statement a row, in one transaction: ``find``, then ``create`` where it found nothing.

        ``find`` returns a row where it found (and updated) what the row stands for. Each statement is sent the
        row's values it names.

        One statement a row costs about 1 ms whatever the size of the graph, where Kùzu 0.11.3 plans an
        ``UNWIND $rows ... MATCH (a {id: r.a}), (b {id: r.b})`` as scans of the node tables crossed with the rows
        (time grows with rows x nodes) and a relation ``MERGE`` as a hash join over its whole table.
        """
        if not rows:
            return
        names = {query: set(PARAM.findall(query)) for query in (find, create) if query}
        with self.transaction():
            for row in rows:
                if not self._write(find, {k: row[k] for k in names[find]}) and create:
                    self._write(create, {k: row[k] for k in names[create]})

    def _copy(self, table: str, rows: Sequence[Mapping[str, Any]], *, relation: bool = False) -> None:
        """Add ``rows``, all new, to ``table`` with one bulk ``COPY`` (see ``arrow_rows`` for when that is safe)."""
        self._copy_columns(table, columns_of(rows), relation=relation)

    def _copy_columns(self, table: str, data: Mapping[str, Sequence[Any]], *, relation: bool = False) -> None:
        """``_copy`` of rows given as columns (name -> values): no object per row, for tables of millions of rows."""
        if not data or not len(next(iter(data.values()))):
            return
        columns = self._table_columns.get(table)
        if columns is None:
            found = self._execute(cy.table_info(table), write=True)
            name, kind = found[0].index("name"), found[0].index("type")
            columns = self._table_columns[table] = [(str(row[name]), str(row[kind])) for row in found[1]]
        rows = arrow_columns(table, columns, data, relation=relation)
        try:
            self._write(f"COPY {table} FROM $rows", {"rows": rows})
        finally:
            del rows
            release_arrow_memory()  # else its allocator keeps the table's memory resident (see there)

    @property
    def in_transaction(self) -> bool:
        """True inside ``transaction()``."""
        return self._transaction

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Make the writes inside one transaction: readers see all of them or none, and a crash keeps none.

        Readers on other connections go on meanwhile and see what was committed before it. Only the thread holding
        the caller's write lock (``KnowledgeStore.writing()``) may write while it is open; an error inside rolls it
        back. Reentrant: an inner ``transaction()`` joins the outer one.
        """
        if self._transaction:
            yield
            return
        self._write(cy.BEGIN_WRITE)
        self._transaction = True
        try:
            yield
        except BaseException:
            self._transaction = False
            with suppress(StoreError):  # Kùzu ends the transaction itself when a statement in it fails
                self._write(cy.ROLLBACK_WRITE)
            raise
        self._transaction = False
        self._write(cy.COMMIT_WRITE)

    def _write_count(self) -> int:
        """Write statements committed through this store since it opened, read without a query.

        A key for caches of what only writes change: one process owns a data dir, and every write of that process
        goes through this store, so an unchanged count means an unchanged graph (``generation`` in ``info()`` is the
        same key for readers in other processes, at the cost of a query).
        """
        return self._writes

    def _bump_generation(self) -> None:
        """Record a new ``generation``, so readers that cache the graph know it changed."""
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})

    def info(self) -> dict[str, str]:
        """Facts about the data dir recorded at first ingest (for example the embedding model)."""
        return {key: value for key, value in self._run(cy.GET_INFO)}

    def set_info(self, values: Mapping[str, str]) -> None:
        """Record facts about the data dir."""
        for key, value in values.items():
            self._write(cy.SET_INFO, {"key": key, "value": value})

    def close(self) -> None:
        """Close every thread's read connection and the write connection, then release the database file.

        Waits for the statement in flight; a read after ``close`` raises ``StoreError``. Closing again does nothing.
        """
        with self._statements.write():
            if self._closed:
                return
            self._closed = True
            with self._readers_lock:
                readers, self._readers = self._readers, []
            for conn in readers:
                conn.close()
            self._conn.close()
            self._db.close()
            if self._open_check is not None:
                self._open_check.record()
