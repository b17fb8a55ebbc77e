"""``KuzuGraphStore``: the graph in an embedded Kùzu database file. The only module that imports ``kuzu``."""

from __future__ import annotations

import contextlib
import datetime
import json
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

import kuzu

from agrag.components.data_models.applied_plan import AppliedPlan
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community, CommunityReport, Finding
from agrag.components.data_models.document import Document
from agrag.components.data_models.document_structure import TableCell
from agrag.components.data_models.entity import Entity, normalize_name
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import MERGED, MergeDecision, MergeLogEntry, ResolutionCandidate
from agrag.components.data_models.retirement import Retirement
from agrag.components.data_models.store_status import GraphCounts
from agrag.components.data_models.stored_document import StoredDocument
from agrag.components.errors import (
    ConfigError,
    DocumentNotFoundError,
    GraphQueryRefusedError,
    GraphQueryTimeoutError,
    GraphQueryTooLargeError,
    MergeNotFoundError,
    RetrievalError,
    StoreError,
    StoreLockedError,
)
from agrag.components.stores import kuzu_cypher as cy
from agrag.components.stores.graph_store import GENERATION_KEY
from agrag.components.stores.kuzu_open_check import KuzuOpenCheck
from agrag.components.stores.read_write_lock import ReadWriteLock

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
# Kùzu copies every row of an UNWIND list into one transaction; batches keep memory flat on large folders.
_BATCH = 2000
# LIMIT of a hop that has no cap.
_NO_CAP = 2**62
# Kùzu's internal fields of a node or relationship value: offsets that mean nothing outside this process.
_INTERNAL_FIELDS = frozenset({"_id", "_src", "_dst"})
_MB = 1024 * 1024
# What the rows of a user- or model-written query may hold by default (text counted by characters).
READ_ONLY_MAX_BYTES = 4 * _MB


def _result_size(value: Any) -> int:
    """About how much a value Kùzu returned holds; refuses a node or relationship of an internal table."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, Mapping):
        if value.get("_label") in cy.INTERNAL_TABLES:
            raise GraphQueryRefusedError(
                "The graph query was refused: it returned a row of an internal table; only the tables of the schema "
                "may be read."
            )
        return sum(_result_size(v) for k, v in value.items() if k not in _INTERNAL_FIELDS) + 8 * len(value)
    if isinstance(value, list | tuple):
        return sum(_result_size(v) for v in value) + 8 * len(value)
    return 8


@dataclass(frozen=True, slots=True)
class _ReadCaps:
    """The limits of one user- or model-written query: rows read, their size, and the deadline (monotonic)."""

    rows: int
    bytes: int
    deadline: float
    timeout_ms: int

    def check(self, size: int, rows_read: int) -> None:
        """Raise once the rows read so far pass the size cap or the deadline."""
        if size > self.bytes:
            raise GraphQueryTooLargeError(
                f"its first {rows_read + 1} rows hold more than {self.bytes:,} bytes",
                "Return fewer or shorter values: add a LIMIT, return properties instead of whole nodes, and cut long "
                "text with substring(x, 1, 200).",
            )
        if time.monotonic() > self.deadline:
            raise GraphQueryTimeoutError(self.timeout_ms)


def _plain(value: Any) -> Any:
    """A value Kùzu returned, as JSON-compatible data (nodes and relationships as dicts of their properties)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if k not in _INTERNAL_FIELDS}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return str(value)  # intervals, UUIDs, blobs


def _chunk_from_row(r: Sequence[Any]) -> Chunk:
    cells = tuple(TableCell(*cell) for cell in json.loads(r[11])) if r[11] else ()
    return Chunk(
        id=r[0],
        document_id=r[1],
        document_version=r[2],
        text=r[3],
        heading_path=tuple(r[4]),
        order=r[5],
        start=r[6],
        end=r[7],
        parent_id=r[8] or None,
        title=r[9],
        kind=r[10] or "text",
        cells=cells,
        current=bool(r[12]),
    )


def _scope_params(scope: Sequence[str] | None) -> dict[str, Any]:
    """The ``$any_doc`` and ``$docs`` parameters of a document scope (None: every document)."""
    if isinstance(scope, str):  # a lone id would read as a scope of its characters
        raise TypeError("A document scope is a sequence of document ids, not one id.")
    return {"any_doc": scope is None, "docs": sorted(set(scope or ()))}


class KuzuGraphStore:
    """Documents, chunks, entities and relations in one Kùzu database file.

    Kùzu allows one read-write database per file per process and one process per file; a second process gets a
    ``StoreLockedError``. The store can be shared between threads:

    - **Reads** run on a connection of the calling thread (made on first use from the one ``kuzu.Database``), so
      parallel requests read in parallel. A read sees what was committed when it started; every write statement
      commits on its own, so several writes are made visible together only by the caller's own lock
      (``KnowledgeStore.writing()``).
    - **Writes** (schema, upserts, ``set_info``, merges, retirement, deletes, communities: every statement of a
      method that changes the graph) run one at a time on the one write connection.
    - **No read runs while a write statement runs.** Kùzu checkpoints when a write commits and its log has grown,
      and a checkpoint needs every transaction of the process to have ended: with reads in flight it waits 5 s and
      then fails the write statement, whose data was committed already (measured with four reading threads). So
      write statements take an internal statement lock exclusively and reads take it shared; it is held for one
      statement (one read-only transaction for ``run_read_only``), never across calls.

    ``buffer_pool_mb`` bounds Kùzu's page cache (by default Kùzu takes about 80% of the machine's memory).

    Usage:
        ```python
        store = KuzuGraphStore(Path(".agrag/graph.kuzu"), buffer_pool_mb=1024)
        print(store.counts())
        store.close()
        ```
    """

    def __init__(self, path: Path, buffer_pool_mb: int | None = None, *, read_only: bool = False) -> None:
        """Open (or create) the database file at ``path`` and its schema.

        An existing file is checked first (``KuzuOpenCheck``): an empty one is refused, and one that changed since
        agrag last closed it is opened in a child process before this one opens it, since Kùzu crashes the process
        on some damaged files.

        Args:
            path: The database file.
            buffer_pool_mb: Kùzu's buffer pool in MB; None leaves Kùzu's default (about 80% of the memory).
            read_only: Open an existing file only to read it (no check, no schema, nothing written).

        Raises:
            ConfigError: ``buffer_pool_mb`` is not a positive number of MB.
            CorruptedStoreError: the file is empty or damaged.
            StoreLockedError: another process holds the file.
            StoreError: the file could not be opened.
        """
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
        self._open_check = None if read_only else KuzuOpenCheck(self._path, buffer_pool_mb)
        if self._open_check is not None:
            self._open_check.run()
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._db = kuzu.Database(str(self._path), buffer_pool_size=(buffer_pool_mb or 0) * _MB, read_only=read_only)
            self._conn = kuzu.Connection(self._db)  # the write connection
        except RuntimeError as exc:
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

    def _write(self, query: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        """Run a statement that writes (or a read that belongs to a write) on the write connection."""
        return self._execute(query, params, write=True)[1]

    def _execute(
        self, query: str, params: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> tuple[list[str], list[list[Any]]]:
        given = dict(params or {})
        missing = set(_PARAM.findall(query)) - given.keys()
        if missing:  # an unbound $param can crash the Kùzu process instead of raising
            raise StoreError(f"Internal error: Cypher parameters {sorted(missing)} are not bound.")
        try:
            with self._statements.write() if write else self._statements.read():
                if self._closed:
                    raise StoreError(f"The graph store {self._path} is closed.")
                result = (self._conn if write else self._reader()).execute(query, given)
                if not isinstance(result, kuzu.QueryResult):
                    return [], []
                columns, rows = list(result.get_column_names()), result.get_all()
        except RuntimeError as exc:
            raise StoreError(f"Kùzu query failed on {self._path}: {exc}{self._hint(exc)}") from exc
        return columns, [list(row) for row in rows]

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
        returned: list[list[Any]] = []
        for start in range(0, len(rows), _BATCH):
            returned += self._run(query, {key: list(rows[start : start + _BATCH]), **extra})
        return returned

    def _drop_relation_support(self, chunk_ids: list[str]) -> None:
        """Take ``chunk_ids`` out of every relation's support; a relation left with none is deleted."""
        gone = set(chunk_ids)
        trimmed: list[dict[str, Any]] = []
        drop: list[dict[str, Any]] = []
        for rel_id, a_id, b_id, support in self._write_batched(cy.RELATIONS_NEAR_CHUNKS, "ids", chunk_ids):
            left = [c for c in support if c not in gone]
            if len(left) != len(support):
                (trimmed if left else drop).append({"id": rel_id, "a": a_id, "b": b_id, "chunk_ids": left})
        self._write_batched(cy.SET_RELATION_SUPPORT, "rows", trimmed)
        self._write_batched(cy.DELETE_RELATIONS, "rows", drop)

    def _write_batched(self, query: str, key: str, rows: Sequence[Any], **extra: Any) -> list[list[Any]]:
        returned: list[list[Any]] = []
        for start in range(0, len(rows), _BATCH):
            returned += self._write(query, {key: list(rows[start : start + _BATCH]), **extra})
        return returned

    def info(self) -> dict[str, str]:
        """Facts about the data dir recorded at first ingest (for example the embedding model)."""
        return {key: value for key, value in self._run(cy.GET_INFO)}

    def set_info(self, values: Mapping[str, str]) -> None:
        """Record facts about the data dir."""
        for key, value in values.items():
            self._write(cy.SET_INFO, {"key": key, "value": value})

    def document_versions(self, document_ids: Sequence[str]) -> dict[str, str]:
        """Return the current version of each known document."""
        rows = self._run(cy.DOCUMENT_VERSIONS, {"ids": list(document_ids)})
        return {doc_id: version for doc_id, version in rows}

    def write_chunks(self, documents: Sequence[Document], chunks: Sequence[Chunk]) -> list[str]:
        """Store the chunks of document versions and their links; mark other versions' chunks superseded."""
        rows = [
            {
                "id": c.id,
                "document_id": c.document_id,
                "document_version": c.document_version,
                "title": c.title,
                "text": c.text,
                "heading_path": list(c.heading_path),
                "ord": c.order,
                "start_offset": c.start,
                "end_offset": c.end,
                "parent_id": c.parent_id or "",
                "kind": c.kind,
                "cells": json.dumps([[x.row, x.column, x.start, x.end] for x in c.cells]) if c.cells else "",
            }
            for c in chunks
        ]
        self._write_batched(cy.UPSERT_CHUNKS, "rows", rows)
        self._write_batched(
            cy.LINK_DOCUMENT_CHUNKS, "pairs", [{"document_id": c.document_id, "chunk_id": c.id} for c in chunks]
        )
        by_document: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_document.setdefault(chunk.document_id, []).append(chunk)
        next_pairs = [
            {"a": a.id, "b": b.id}
            for group in by_document.values()
            for a, b in pairwise(sorted(group, key=lambda c: c.order))
        ]
        self._write_batched(cy.LINK_NEXT, "pairs", next_pairs)
        self._write_batched(cy.LINK_PARENT, "pairs", [{"a": c.id, "b": c.parent_id} for c in chunks if c.parent_id])
        versions = [{"id": d.id, "version": d.version} for d in documents]
        return [row[0] for row in self._write_batched(cy.SUPERSEDE_CHUNKS, "rows", versions)]

    def stored_documents(self, document_ids: Sequence[str]) -> dict[str, StoredDocument]:
        """Return the committed, not deleted documents among ``document_ids``, with the folder each came from."""
        rows = self._run(cy.DOCUMENT_ORIGINS, {"ids": list(document_ids)})
        return {r[0]: StoredDocument(r[0], r[1], r[2], r[3], int(r[4]), r[5] or "") for r in rows}

    def record_source_folders(self, folders: Mapping[str, str]) -> None:
        """Record the folder each document (id → folder) came from, for documents stored before agrag did."""
        self._write_batched(cy.SET_SOURCE_FOLDERS, "rows", [{"id": i, "source_folder": f} for i, f in folders.items()])

    def document_config_hashes(self, document_ids: Sequence[str]) -> dict[str, str]:
        """Return the hash of the settings each known document was ingested with ('' if not recorded)."""
        return {doc_id: h or "" for doc_id, h in self._run(cy.DOCUMENT_CONFIG_HASHES, {"ids": list(document_ids)})}

    def commit_documents(
        self,
        documents: Sequence[tuple[Document, int]],
        config_hash: str = "",
        *,
        config_hashes: Mapping[str, str] | None = None,
        plans: Mapping[str, str] | None = None,
    ) -> None:
        """Record each document version (with its chunk count) as current and fully written.

        ``config_hash`` names the settings it was ingested with (``config_hashes`` per document id, where given);
        ``plans`` the plan (``AppliedPlan`` JSON) each was ingested with. Also records a new ``generation``, so
        readers that cache the graph know it changed.
        """
        rows = [
            {
                "id": d.id,
                "version": d.version,
                "title": d.title,
                "source_path": d.source_path,
                "chunk_count": count,
                "config_hash": (config_hashes or {}).get(d.id, config_hash),
                "source_folder": d.source_folder,
                "plan": (plans or {}).get(d.id, ""),
            }
            for d, count in documents
        ]
        self._write_batched(cy.UPSERT_DOCUMENTS, "rows", rows)
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})

    def existing_entity_ids(self, entity_ids: Sequence[str]) -> set[str]:
        """Return which of ``entity_ids`` are stored."""
        return {row[0] for row in self._run(cy.EXISTING_ENTITIES, {"ids": list(entity_ids)})}

    def upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Create the entities not yet stored; stored entities keep their name, label and description."""
        rows = [
            {
                "id": e.id,
                "name": e.name,
                "norm_name": normalize_name(e.name),
                "label": e.label,
                "description": e.description,
            }
            for e in entities
        ]
        self._write_batched(cy.UPSERT_ENTITIES, "rows", rows)

    def upsert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Link chunks to the entities they name."""
        rows = [{"chunk_id": m.chunk_id, "entity_id": m.entity_id, "count": m.count} for m in mentions]
        self._write_batched(cy.UPSERT_MENTIONS, "rows", rows)

    def upsert_about(self, about: Sequence[Mention]) -> None:
        """Link chunks to the entities they are about."""
        rows = [{"chunk_id": m.chunk_id, "entity_id": m.entity_id} for m in about]
        self._write_batched(cy.UPSERT_ABOUT, "rows", rows)

    def passage_edges(self) -> PassageEdges:
        """Every (chunk, entity) mention and about link of the current chunks, merged entities as their resolved one.

        ``names`` maps the normalized names of entities (members of a merge included) to resolved entity ids.
        """
        mentions = {(row[0], row[1]) for row in self._run(cy.CURRENT_MENTION_EDGES)}
        about = {(row[0], row[1]) for row in self._run(cy.CURRENT_ABOUT_EDGES)}
        names = {(row[0], row[1]) for row in [*self._run(cy.CANONICAL_NAMES), *self._run(cy.MEMBER_NAMES)]}
        return PassageEdges(tuple(sorted(mentions)), tuple(sorted(about)), tuple(sorted(names)))

    def upsert_relations(self, relations: Sequence[Relation]) -> None:
        """Create relations, or add supporting chunks to stored ones."""
        rows = [
            {
                "id": r.id,
                "source_id": r.source_id,
                "target_id": r.target_id,
                "type": r.type,
                "description": r.description,
                "chunk_ids": sorted(r.chunk_ids),
            }
            for r in relations
        ]
        self._write_batched(cy.UPSERT_RELATIONS, "rows", rows)

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Return the stored chunks among ``chunk_ids``, in the order asked."""
        rows = self._run(cy.GET_CHUNKS, {"ids": list(chunk_ids)})
        found = {r[0]: _chunk_from_row(r) for r in rows}
        return [found[i] for i in chunk_ids if i in found]

    def get_chunks_in_scope(self, chunk_ids: Sequence[str], scope: Sequence[str] | None) -> list[Chunk]:
        """Return the stored chunks among ``chunk_ids`` whose document is in ``scope``, in the order asked.

        Current and superseded chunks alike. ``scope`` is the document ids that may be read (None: every document);
        it is applied in the query, so a chunk out of scope is missing, as an unknown id is.
        """
        rows = self._run(cy.GET_CHUNKS_IN_SCOPE, {"ids": list(chunk_ids), **_scope_params(scope)})
        found = {r[0]: _chunk_from_row(r) for r in rows}
        return [found[i] for i in chunk_ids if i in found]

    def chunk_neighbours(self, chunk_id: str, direction: str, scope: Sequence[str] | None) -> list[Chunk]:
        """Return the chunks next to one chunk, in its document version, if its document is in ``scope``.

        Args:
            chunk_id: The chunk to start from (current or superseded); out of scope or unknown, it has no neighbours.
            direction: ``parent`` (the section chunk it was cut from), ``children`` (the chunks cut from it, in
                order), ``siblings`` (the other children of its parent, in order; none without a parent),
                ``previous`` or ``next`` (in reading order).
            scope: Document ids that may be read; None reads every document. Applied in the query.

        Raises:
            RetrievalError: ``direction`` is not one of the above.
        """
        query = cy.CHUNK_NEIGHBOURS.get(direction)
        if query is None:
            raise RetrievalError(
                f"Unknown chunk direction {direction!r}. Use one of: {', '.join(cy.CHUNK_NEIGHBOURS)}."
            )
        return [_chunk_from_row(r) for r in self._run(query, {"id": chunk_id, **_scope_params(scope)})]

    def version_chunks_overlapping(
        self, document_id: str, version: str, start: int, end: int, scope: Sequence[str] | None
    ) -> list[Chunk]:
        """Return the chunks of one document version whose span overlaps the characters ``[start, end)``.

        Spans are half-open: a chunk that ends where the range starts (or starts where it ends) does not overlap.
        Section and text chunks alike, ordered by start offset, then order. Empty if the document is out of
        ``scope`` (document ids that may be read; None reads every document), applied in the query.
        """
        params = {"document_id": document_id, "version": version, "span_start": int(start), "span_end": int(end)}
        rows = self._run(cy.VERSION_CHUNKS_OVERLAPPING, {**params, **_scope_params(scope)})
        return [_chunk_from_row(r) for r in rows]

    def document_version_info(
        self, document_ids: Sequence[str], scope: Sequence[str] | None
    ) -> dict[str, tuple[str, str]]:
        """Return ``(current version, title)`` of each known document among ``document_ids`` that is in ``scope``.

        The version is ``''`` for a deleted document (and for one whose first ingest has not finished). ``scope``
        is the document ids that may be read (None: every document), applied in the query: a document out of scope
        is missing, as an unknown one is.
        """
        rows = self._run(cy.DOCUMENT_VERSION_INFO, {"ids": list(document_ids), **_scope_params(scope)})
        return {doc_id: (version or "", title or "") for doc_id, version, title in rows}

    def get_entities(self, entity_ids: Sequence[str]) -> list[Entity]:
        """Return the stored entities among ``entity_ids``, in the order asked."""
        rows = self._run(cy.GET_ENTITIES, {"ids": list(entity_ids)})
        found = {r[0]: Entity(id=r[0], name=r[1], label=r[2], description=r[3]) for r in rows}
        return [found[i] for i in entity_ids if i in found]

    def supporting_chunk_ids(self, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        """Current chunks about or mentioning each entity: chunks about it first, then most mentions, then by id."""
        params = {"ids": list(entity_ids)}
        ranked: dict[tuple[str, str], tuple[int, int]] = {}
        for entity_id, chunk_id in self._run(cy.ABOUT_CHUNKS, params):
            ranked[(entity_id, chunk_id)] = (0, 0)
        for entity_id, chunk_id, count in self._run(cy.SUPPORTING_CHUNKS, params):
            ranked.setdefault((entity_id, chunk_id), (1, -int(count)))
        support: dict[str, list[tuple[tuple[int, int], str]]] = {}
        for (entity_id, chunk_id), order in ranked.items():
            support.setdefault(entity_id, []).append((order, chunk_id))
        return {entity_id: [c for _, c in sorted(pairs)] for entity_id, pairs in support.items()}

    def relations_of(self, entity_id: str) -> list[Relation]:
        """Return the relations touching an entity, in either direction."""
        rows = self._run(cy.GET_RELATIONS_OF, {"entity_id": entity_id})
        relations: dict[str, Relation] = {}
        for rel_id, rel_type, description, chunk_ids, a_id, b_id in rows:
            relations[rel_id] = Relation(rel_id, a_id, b_id, rel_type, tuple(chunk_ids), description)
        return list(relations.values())

    def retire_chunks(self, chunk_ids: Sequence[str], keep: Collection[str] = ()) -> Retirement:
        """Take what only these (superseded or deleted) chunks supported out of the current graph.

        Their ids leave every relation's support, and a relation left with none is deleted; an entity they named or
        were about that no current chunk supports any more is deleted with its links, unless it is in ``keep``
        (entities that text still to be written in the same run will name). The chunks themselves stay readable.
        Retiring the same chunks again changes nothing more.
        """
        ids = list(chunk_ids)
        if not ids:
            return Retirement((), ())
        self._drop_relation_support(ids)
        touched = sorted({row[0] for row in self._write_batched(cy.ENTITIES_OF_CHUNKS, "ids", ids)})
        named = {i for row in self._write_batched(cy.STILL_NAMED, "ids", touched) for i in row if i}
        orphans = [e for e in touched if e not in named and e not in keep]
        self._write_batched(cy.DELETE_ENTITIES, "ids", orphans)
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})
        return Retirement(tuple(touched), tuple(orphans))

    def entity_ids_of_documents(self, document_ids: Sequence[str]) -> set[str]:
        """The resolved entities that current chunks of these documents name or are about."""
        return {row[0] for row in self._run(cy.ENTITIES_OF_DOCUMENTS, {"ids": list(document_ids)})}

    def entity_records_of_documents(self, document_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(record id, resolved id, normalized name)`` of each entity record the documents' current chunks name.

        A merged entity's members are among them, each with the name those documents use (chunks about a record
        count too).
        """
        rows = self._run(cy.ENTITY_RECORDS_OF_DOCUMENTS, {"ids": list(document_ids)})
        return sorted((record_id, resolved_id, norm_name or "") for record_id, resolved_id, norm_name in rows)

    def community_ids_of_documents(self, document_ids: Sequence[str]) -> set[str]:
        """The communities holding an entity that current chunks of these documents name or are about."""
        entity_ids = sorted(self.entity_ids_of_documents(document_ids))
        return {row[0] for row in self._run_batched(cy.COMMUNITIES_OF_ENTITIES, "ids", entity_ids)}

    def document_chunk_ids(self, document_id: str, version: str | None = None) -> list[str]:
        """The ids of a document's chunks, of every version or of one, in document order."""
        rows = self._run(cy.CHUNK_IDS_OF_DOCUMENT, {"id": document_id})
        return [chunk_id for chunk_id, chunk_version, _ in rows if version is None or chunk_version == version]

    def delete_document(self, document_id: str) -> list[str]:
        """Mark a document deleted and its chunks no longer current; return every chunk id of it, to retire.

        Its chunks stay readable by id (as superseded text). Deleting it again repeats the retirement, which is
        idempotent, so a delete that was killed half-way completes. Raises ``DocumentNotFoundError`` for an
        unknown id.
        """
        if not self._write(cy.MARK_DOCUMENT_DELETED, {"id": document_id}):
            raise DocumentNotFoundError(document_id)
        return [row[0] for row in self._write(cy.CHUNKS_OF_DELETED_DOCUMENT, {"id": document_id})]

    def entities_of_chunks(self, chunk_ids: Sequence[str]) -> set[str]:
        """The entity records (members of merges too) that these chunks name or are about."""
        return {row[0] for row in self._run_batched(cy.ENTITIES_OF_CHUNKS, "ids", list(chunk_ids))}

    def unlink_chunks(self, chunk_ids: Sequence[str]) -> None:
        """Take these chunks' links out of the graph: their mentions, about links and relation support.

        A relation left with no support is deleted; entities stay (``drop_unnamed_entities`` removes the orphans
        once new links are written). The chunks themselves stay as they are. Unlinking again changes nothing more.
        """
        ids = list(chunk_ids)
        if not ids:
            return
        self._drop_relation_support(ids)
        self._write_batched(cy.DELETE_CHUNK_MENTIONS, "ids", ids)
        self._write_batched(cy.DELETE_CHUNK_ABOUT, "ids", ids)
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})

    def drop_unnamed_entities(self, entity_ids: Sequence[str]) -> list[str]:
        """Delete those of ``entity_ids`` that no current chunk names (nor names a member of); return them.

        As retiring chunks does: an entity a merged member still needs stays, and deleting again changes nothing.
        """
        ids = sorted(set(entity_ids))
        named = {i for row in self._write_batched(cy.STILL_NAMED, "ids", ids) for i in row if i}
        orphans = [e for e in ids if e not in named]
        self._write_batched(cy.DELETE_ENTITIES, "ids", orphans)
        if orphans:
            self.set_info({GENERATION_KEY: uuid.uuid4().hex})
        return orphans

    def resolved_ids(self, entity_ids: Sequence[str]) -> dict[str, str]:
        """The resolved id (the entity it is merged into, else itself) of each stored entity among ``entity_ids``."""
        return {row[0]: row[1] for row in self._run_batched(cy.CANONICAL_IDS, "ids", sorted(set(entity_ids)))}

    def set_document_plans(self, plans: Mapping[str, str]) -> None:
        """Record the plan (``AppliedPlan`` JSON) each document (id → plan) was last ingested or re-extracted with."""
        self._write_batched(cy.SET_DOCUMENT_PLANS, "rows", [{"id": i, "plan": p} for i, p in plans.items()])

    def set_config_hashes(self, hashes: Mapping[str, str]) -> None:
        """Record the hash of the settings each document (id → hash) was last extracted with."""
        self._write_batched(cy.SET_CONFIG_HASHES, "rows", [{"id": i, "config_hash": h} for i, h in hashes.items()])

    def canonical_entities(self) -> list[Entity]:
        """Every stored entity that is not merged into another: what new entities may resolve into."""
        rows = self._run(cy.CANONICAL_ENTITIES)
        return [Entity(id=r[0], name=r[1], label=r[2], description=r[3]) for r in sorted(rows)]

    def apply_resolution(
        self,
        decisions: Sequence[MergeDecision],
        candidates: Sequence[ResolutionCandidate],
        run_id: str,
        *,
        positions: Sequence[int] | None = None,
    ) -> None:
        """Record merges as pointers (``merged`` decisions), log every decision, and keep the near misses.

        Each decision's log line is ``{run_id}-{position}``: ``positions`` gives each decision's place in its run's
        list when ``decisions`` are a part of it (one commit batch); by default they are numbered from 0.
        """
        if positions is not None and len(positions) != len(decisions):
            raise StoreError("Internal error: apply_resolution needs one position per decision.")
        merges = [{"member_id": d.member_id, "resolved_id": d.resolved_id} for d in decisions if d.decision == MERGED]
        self._write_batched(cy.SET_MERGED_INTO, "rows", merges)
        self._write_batched(cy.FOLLOW_MERGES, "rows", merges)
        log = [
            {
                "id": f"{run_id}-{index:05d}",
                "member_id": d.member_id,
                "resolved_id": d.resolved_id,
                "decision": d.decision,
                "rule": d.rule,
                "score": float(d.score),
                "reason": d.reason,
                "run_id": run_id,
            }
            for index, d in zip(positions if positions is not None else range(len(decisions)), decisions, strict=True)
        ]
        self._write_batched(cy.UPSERT_MERGE_LOG, "rows", log)
        merged_ids = [d.member_id for d in decisions if d.decision == MERGED]
        self._write_batched(cy.DELETE_CANDIDATES_OF, "ids", merged_ids)
        rows = [
            {
                "id": "|".join(sorted((c.entity_id, c.other_id))),
                "entity_id": c.entity_id,
                "other_id": c.other_id,
                "name": c.name,
                "other_name": c.other_name,
                "score": float(c.score),
                "rule": c.rule,
            }
            for c in candidates
        ]
        self._write_batched(cy.UPSERT_CANDIDATES, "rows", rows)
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})

    def merge_log(self) -> list[MergeLogEntry]:
        """Every resolution decision, oldest run first, with the names of both entities."""
        return [
            MergeLogEntry(r[0], r[1], r[2], r[3], r[4], float(r[5]), r[6], bool(r[7]), r[8] or "", r[9] or "")
            for r in self._run(cy.GET_MERGE_LOG)
        ]

    def undo_merge(self, key: str) -> list[MergeLogEntry]:
        """Undo the active merge with this log id, or every active merge of the entity with this id.

        The member entity gets back its own mentions, relations and search point; the log keeps the line, marked
        undone. Returns the lines undone.

        Raises:
            MergeNotFoundError: no active merge has this log id or member id.
        """
        rows = self._write(cy.ACTIVE_MERGES_OF, {"id": key})
        if not rows:
            raise MergeNotFoundError(key)
        for log_id, _, _ in rows:
            self._write(cy.UNDO_MERGE, {"log_id": log_id})
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})
        undone = {row[0] for row in rows}
        return [entry for entry in self.merge_log() if entry.id in undone]

    def candidates(self) -> list[ResolutionCandidate]:
        """The near misses of entity resolution, most similar first."""
        return [ResolutionCandidate(r[0], r[1], r[2], r[3], float(r[4]), r[5]) for r in self._run(cy.GET_CANDIDATES)]

    def entity_graph(self) -> tuple[list[str], list[tuple[str, str, float]]]:
        """The resolved entities joined by relations, each edge weighted by its supporting chunks."""
        edges = [(a, b, float(w or 1)) for a, b, w in self._run(cy.ENTITY_GRAPH_EDGES) if a != b]
        entity_ids = sorted({e for a, b, _ in edges for e in (a, b)})
        return entity_ids, edges

    def community_inputs(
        self, entity_ids: Sequence[str]
    ) -> tuple[list[Entity], list[Relation], list[Chunk], list[tuple[str, str]]]:
        """What community reports are written from: the entities, their relations, and the chunks naming them."""
        ids = list(entity_ids)
        entities = self.get_entities(ids)
        relations = {
            r[0]: Relation(r[0], r[4], r[5], r[1], tuple(r[3]), r[2])
            for r in self._run_batched(cy.RELATIONS_AMONG, "ids", ids)
        }
        mentions = sorted({(row[0], row[1]) for row in self._run_batched(cy.MENTIONS_OF, "ids", ids)})
        chunks = self.get_chunks(sorted({c for c, _ in mentions}))
        return entities, list(relations.values()), chunks, mentions

    def replace_communities(self, communities: Sequence[Community]) -> None:
        """Store this hierarchy (with reports) in place of the previous one."""
        self._write(cy.DELETE_COMMUNITIES)
        rows = [
            {
                "id": k.id,
                "level": k.level,
                "parent_id": k.parent_id or "",
                "size": len(k.entity_ids),
                "title": k.report.title if k.report else "",
                "summary": k.report.summary if k.report else "",
                "rating": float(k.report.rating) if k.report else 0.0,
                "findings": json.dumps([[f.summary, f.explanation] for f in k.report.findings]) if k.report else "[]",
                "method": k.report.method if k.report else "",
            }
            for k in communities
        ]
        self._write_batched(cy.UPSERT_COMMUNITIES, "rows", rows)
        pairs = [{"entity_id": e, "community_id": k.id} for k in communities for e in k.entity_ids]
        self._write_batched(cy.LINK_COMMUNITY_MEMBERS, "pairs", pairs)
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})

    def communities(self) -> list[Community]:
        """Every stored community with its report, by level."""
        found = []
        for cid, level, parent, title, summary, rating, findings, method, members in self._run(cy.GET_COMMUNITIES):
            report = None
            if method:
                parsed = [Finding(a, b) for a, b in json.loads(findings or "[]")]
                report = CommunityReport(title, summary, float(rating), tuple(parsed), method)
            # collect() over an OPTIONAL MATCH that found nothing gives null, not [] (a community whose entities
            # were all deleted since it was detected)
            found.append(
                Community(cid, int(level), tuple(sorted(m for m in members or () if m)), parent or None, report)
            )
        return found

    def _canonical_ids(self, entity_ids: Sequence[str]) -> list[str]:
        """The resolved ids of the stored entities among ``entity_ids``, in the order asked, without repeats."""
        resolved = dict(self._run(cy.CANONICAL_IDS, {"ids": list(entity_ids)}))
        return list(dict.fromkeys(resolved[i] for i in entity_ids if i in resolved))

    def traverse(
        self,
        seed_ids: Sequence[str],
        relation_types: Sequence[str] | None = None,
        *,
        direction: str = "both",
        depth: int = 1,
        per_hop: int | None = None,
        limit: int | None = None,
    ) -> list[tuple[Relation, int]]:
        """Walk the relations outward from the seeds, hop by hop; return each relation with the hop that reached it.

        Both ends of a relation are the entities they resolved into. A hop expands only the entities first reached
        by the hop before (the seeds for hop 1), so no entity (a seed least of all) is expanded twice, and no
        relation is returned twice. Within a hop the relations with the most supporting chunks come first (then by
        id); ``per_hop`` keeps that many of them, ``limit`` caps the whole walk.

        Args:
            seed_ids: Entity ids to start from (a merged entity starts from the entity it resolved into).
            relation_types: Only cross relations of these types; None or empty crosses every type.
            direction: ``out`` follows relations from source to target, ``in`` from target to source, ``both`` either.
            depth: Number of hops.
            per_hop: The most relations kept at each hop; None keeps all.
            limit: The most relations in all; None keeps all.

        Raises:
            RetrievalError: ``direction`` is not ``both``, ``out`` or ``in``.
        """
        if direction not in cy.TRAVERSE_HOP:
            raise RetrievalError(f"Unknown traversal direction {direction!r}. Use one of: both, out, in.")
        frontier = self._canonical_ids(seed_ids)
        rows = self._hops(
            frontier,
            cy.TRAVERSE_HOP[direction],
            extra={},
            relation_types=relation_types,
            depth=depth,
            per_hop=per_hop,
            limit=limit,
        )
        return [(relation, hop) for relation, hop, _ in rows]

    def visible_entities(self, entity_ids: Sequence[str], scope: Sequence[str] | None) -> list[Entity]:
        """Return the resolved entities among ``entity_ids`` that a current chunk in ``scope`` names or is about.

        A merged entity's id stands for the entity it resolved into, and the chunks naming or about its members count
        for it. Each resolved entity comes once, where it was first asked for. Within a scope, its name, label and
        description come from the in-scope text only (see ``_named_in_scope``). An entity no current chunk of a
        document in ``scope`` (document ids that may be read; None: every document) names is missing, as an unknown
        id is; the scope is applied in the query.
        """
        rows = self._run(cy.VISIBLE_ENTITIES, {"ids": list(entity_ids), **_scope_params(scope)})
        found = {r[0]: Entity(id=r[1], name=r[2], label=r[3], description=r[4]) for r in rows}
        if scope is not None:
            named = self._named_in_scope(sorted({e.id for e in found.values()}), scope)
            found = {asked: named[e.id] for asked, e in found.items() if e.id in named}
        visible: dict[str, Entity] = {}
        for asked in entity_ids:
            if asked in found:
                visible.setdefault(found[asked].id, found[asked])
        return list(visible.values())

    def _named_in_scope(
        self, resolved_ids: Sequence[str] | None, scope: Sequence[str], *, describe: bool = True
    ) -> dict[str, Entity]:
        """What a scope calls each resolved entity, from the records of its cluster that in-scope chunks name.

        Its own record if they name it, else the member record they name most (then by id); the description only
        when no chunk outside the scope (of any version) names that record, as a record keeps the description of
        the first text that named it. ``resolved_ids`` None: every entity the scope sees; ``describe`` False leaves
        descriptions out.
        """
        if resolved_ids is None:
            rows = self._run(cy.ALL_RECORDS_IN_SCOPE, _scope_params(scope))
        elif resolved_ids:
            rows = self._run(cy.RECORDS_IN_SCOPE, {"ids": list(resolved_ids), **_scope_params(scope)})
        else:
            return {}
        best: dict[str, tuple[tuple[bool, int, str], Entity]] = {}
        for resolved_id, record_id, name, label, description, links in rows:
            key = (record_id != resolved_id, -int(links), record_id)
            if resolved_id not in best or key < best[resolved_id][0]:
                best[resolved_id] = (key, Entity(record_id, name, label, description))
        records = [record.id for _, record in best.values()] if describe else []
        outside = {row[0] for row in self._run(cy.RECORDS_NAMED_OUTSIDE, {"ids": records, "docs": sorted(scope)})}
        return {
            resolved_id: Entity(resolved_id, r.name, r.label, r.description if describe and r.id not in outside else "")
            for resolved_id, (_, r) in best.items()
        }

    def entities_named_in_scope(self, name: str, scope: Sequence[str] | None, limit: int = 5) -> list[Entity]:
        """The resolved entities with a record of this (normalized) name that a current in-scope chunk names.

        As ``visible_entities`` shows them; a name only documents outside the scope use finds nothing.
        """
        norm_name = normalize_name(name)
        if not norm_name or limit <= 0:
            return []
        rows = self._run(cy.NAMED_IN_SCOPE, {"norm_name": norm_name, **_scope_params(scope)})
        return self.visible_entities(sorted({row[0] for row in rows})[:limit], scope)

    def entity_support_in_scope(
        self, entity_ids: Sequence[str], scope: Sequence[str] | None, per_entity: int = 3
    ) -> dict[str, list[str]]:
        """The current chunks in ``scope`` about or mentioning each entity: at most ``per_entity``, best first.

        Keyed by resolved entity (a merged entity's id counts as the entity it resolved into, and its members'
        chunks count for it), in id order. Chunks about the entity come first, then those naming it most often
        (its members' mentions added up), then by id, as in ``supporting_chunk_ids``. An entity with no such chunk
        is missing. ``scope`` is the document ids that may be read (None: every document), applied in the query.
        """
        rows = self._run(cy.SUPPORT_IN_SCOPE, {"ids": list(entity_ids), **_scope_params(scope)})
        support: dict[str, list[str]] = {}
        for entity_id, chunk_id in rows:
            chunks = support.setdefault(entity_id, [])
            if len(chunks) < per_entity:
                chunks.append(chunk_id)
        return {entity_id: chunks for entity_id, chunks in support.items() if chunks}

    def scoped_relations(
        self,
        seed_ids: Sequence[str],
        scope: Sequence[str] | None,
        *,
        relation_types: Sequence[str] | None = None,
        depth: int = 1,
        per_hop: int | None = None,
        limit: int | None = None,
    ) -> list[tuple[Relation, int, list[str]]]:
        """Walk the relations outward from the seeds within a document scope, as ``traverse`` does in both directions.

        Returns each relation crossed (both ends resolved, all its chunk ids), the hop that reached it, and its chunk
        ids that are current and in scope, sorted: none when all of those were superseded (the relation is then only
        a path between the entities, not an assertion a current text makes).

        Within a scope, everything is decided in the query: a relation is crossed only if every one of its chunk ids
        is a stored chunk of an in-scope document (of any version), so a relation an out-of-scope document (or a
        chunk id of no stored chunk) contributed to is not even shown to exist, and only if both its ends are
        visible (see ``visible_entities``); seeds that are not visible start nothing. With ``scope`` None every
        relation with a chunk id is crossed, and the seeds are every stored entity asked for. A relation without
        chunk ids is never crossed.

        No entity is expanded twice and no relation returned twice. Within a hop the relations with the most
        current in-scope chunks come first, then those with the most chunk ids, then by id.

        Args:
            seed_ids: Entity ids to start from (a merged entity starts from the entity it resolved into).
            scope: Document ids that may be read; None reads every document.
            relation_types: Only cross relations of these types; None or empty crosses every type.
            depth: Number of hops.
            per_hop: The most relations kept at each hop; None keeps all.
            limit: The most relations in all; None keeps all.
        """
        scope_params = _scope_params(scope)
        if scope is None:
            frontier, query = self._canonical_ids(seed_ids), cy.SCOPED_HOP["all"]
        else:
            frontier, query = [e.id for e in self.visible_entities(seed_ids, scope)], cy.SCOPED_HOP["scoped"]
        return self._hops(
            frontier,
            query,
            extra=scope_params,
            relation_types=relation_types,
            depth=depth,
            per_hop=per_hop,
            limit=limit,
        )

    def _hops(
        self,
        frontier: list[str],
        query: str,
        *,
        extra: dict[str, Any],
        relation_types: Sequence[str] | None,
        depth: int,
        per_hop: int | None,
        limit: int | None,
    ) -> list[tuple[Relation, int, list[str]]]:
        """Run one hop statement per hop from ``frontier``: each relation once, each entity expanded once.

        A row is (id, type, description, chunk ids, source, target[, the chunk ids a scoped read may show]).
        """
        visited = set(frontier)
        walked: list[tuple[Relation, int, list[str]]] = []
        seen: set[str] = set()
        types = sorted(set(relation_types or ()))
        for hop in range(1, depth + 1):
            caps = [c for c in (per_hop, None if limit is None else limit - len(walked)) if c is not None]
            cap = min(caps, default=_NO_CAP)
            if not frontier or cap <= 0:
                break
            params = {"ids": frontier, "seen": sorted(seen), "any_type": not types, "types": types, "cap": cap}
            reached: list[str] = []
            for rel_id, rel_type, description, chunk_ids, a_id, b_id, *shown in self._run(query, {**params, **extra}):
                if rel_id in seen:
                    continue
                seen.add(rel_id)
                relation = Relation(rel_id, a_id, b_id, rel_type, tuple(chunk_ids), description)
                walked.append((relation, hop, sorted(shown[0]) if shown else []))
                for end in (a_id, b_id):
                    if end not in visited:
                        visited.add(end)
                        reached.append(end)
            frontier = reached
        return walked

    def relation_types_of(self, entity_id: str) -> dict[str, int]:
        """The types of the relations touching an entity (either direction, one hop), with how many of each.

        Most frequent first; an unknown entity has none.
        """
        resolved = self._canonical_ids([entity_id])
        if not resolved:
            return {}
        rows = self._run(cy.RELATION_TYPES_OF, {"entity_id": resolved[0]})
        return {rel_type: int(count) for rel_type, count in sorted(rows, key=lambda r: (-int(r[1]), r[0]))}

    def find_entities_by_name(self, name: str, limit: int = 5) -> list[Entity]:
        """The resolved entities whose name normalizes like ``name`` (see ``normalize_name``), by id."""
        norm_name = normalize_name(name)
        if not norm_name or limit <= 0:
            return []
        ids = sorted({row[0] for row in self._run(cy.ENTITIES_BY_NORM_NAME, {"norm_name": norm_name})})
        return self.get_entities(ids[:limit])

    def run_read_only(
        self,
        query: str,
        params: Mapping[str, Any] | None = None,
        max_rows: int = 1000,
        timeout_ms: int = 10_000,
        max_bytes: int = READ_ONLY_MAX_BYTES,
    ) -> tuple[list[str], list[list[Any]]]:
        """Run one query written by a user or a model, which must only read; return its columns and rows.

        The query is refused before it runs if it holds a write or transaction clause, more than one statement, or a
        ``CALL`` of anything but a catalog procedure, if it names a table outside the public schema (or has a node
        pattern without a label, which would match them), or if it asks for work Kùzu cannot bound
        (``kuzu_cypher.unbounded_problem``). It then runs inside a read-only transaction, which Kùzu ends on any
        write, under Kùzu's own query timeout; its sorts, strings and aggregations are bounded by the buffer pool
        (``buffer_pool_mb``). Values come back JSON-compatible (nodes and relationships as dicts of their
        properties).

        Args:
            query: One Cypher statement (Kùzu dialect).
            params: Values of its ``$parameters``.
            max_rows: Rows beyond this many are not read.
            timeout_ms: The query is interrupted after this long (reading its rows included).
            max_bytes: The most the rows read may hold (text counted by characters); more stops the query.

        Raises:
            GraphQueryRefusedError: the query is not read-only, reads an internal table or asks for unbounded work.
            GraphQueryTimeoutError: it ran past ``timeout_ms``.
            GraphQueryTooLargeError: its rows passed ``max_bytes``, or its work did not fit the buffer pool.
            StoreError: it names an unbound parameter, is not valid Cypher, or failed.
        """
        problem = cy.read_only_problem(query)
        if problem:
            raise GraphQueryRefusedError(f"The graph query must be read-only and a single statement, but {problem}.")
        problem = cy.internal_table_problem(query) or cy.unbounded_problem(query)
        if problem:
            raise GraphQueryRefusedError(f"The graph query was refused before it ran: {problem}.")
        given = dict(params or {})
        missing = set(_PARAM.findall(cy.clause_text(query))) - given.keys()
        if missing:  # an unbound $param can crash the Kùzu process instead of raising
            raise StoreError(f"The graph query uses parameters that have no value: {', '.join(sorted(missing))}.")
        caps = _ReadCaps(max_rows, max_bytes, time.monotonic() + timeout_ms / 1000, timeout_ms)
        with self._statements.read():
            conn = self._reader()
            try:
                conn.set_query_timeout(timeout_ms)
                return self._read_in_transaction(conn, query, given, caps)
            except RuntimeError as exc:
                if "Interrupted" in str(exc):
                    raise GraphQueryTimeoutError(timeout_ms) from exc
                if "buffer pool is full" in str(exc):
                    size = f"{self._buffer_pool_mb} MB" if self._buffer_pool_mb else "Kùzu's default size"
                    raise GraphQueryTooLargeError(
                        f"its work did not fit the graph store's buffer pool ({size})",
                        "Ask for less (a LIMIT, fewer or shorter values, no cross products); the buffer pool is "
                        "AGRAG_KUZU_BUFFER_POOL_MB.",
                    ) from exc
                raise StoreError(f"The graph query failed on {self._path}: {exc}") from exc
            finally:
                conn.set_query_timeout(0)

    @staticmethod
    def _read_in_transaction(
        conn: kuzu.Connection, query: str, params: dict[str, Any], caps: _ReadCaps
    ) -> tuple[list[str], list[list[Any]]]:
        """Run ``query`` in a read-only transaction on ``conn``, always ended (the caller holds the read side)."""
        conn.execute(cy.BEGIN_READ_ONLY)
        try:
            result = conn.execute(query, params)
            if not isinstance(result, kuzu.QueryResult):
                raise GraphQueryRefusedError("The graph query must be a single statement.")
            columns = list(result.get_column_names())
            rows: list[list[Any]] = []
            size = 0
            while len(rows) < caps.rows and result.has_next():
                row = result.get_next()
                size += sum(_result_size(v) for v in row)
                caps.check(size, len(rows))
                rows.append([_plain(v) for v in row])
            result.close()
        except BaseException:
            with contextlib.suppress(RuntimeError):  # Kùzu may have ended it already (a timeout does)
                conn.execute(cy.ROLLBACK)
            raise
        conn.execute(cy.COMMIT)
        return columns, rows

    def schema_text(self) -> str:
        """The node and relationship tables a query may read, with their properties, described for a prompt.

        Leaves out the store's internal tables, and adds the most common relation types and entity labels.
        """
        tables = sorted(
            (t for t in self._records(cy.SHOW_TABLES) if t["name"] not in cy.INTERNAL_TABLES), key=lambda t: t["name"]
        )
        lines = ["Node tables:"]
        for table in (t["name"] for t in tables if t["type"] == "NODE"):
            columns = [
                f"{c['name']} {c['type']}" + (" PRIMARY KEY" if c.get("primary key") else "")
                for c in self._records(cy.table_info(table))
            ]
            lines.append(f"  {table}({', '.join(columns)})")
        lines.append("Relationship tables:")
        for table in (t["name"] for t in tables if t["type"] == "REL"):
            columns = [f"{c['name']} {c['type']}" for c in self._records(cy.table_info(table))]
            properties = f" {{{', '.join(columns)}}}" if columns else ""
            for ends in self._records(cy.show_connection(table)):
                source, target = ends["source table name"], ends["destination table name"]
                if not {source, target} & cy.INTERNAL_TABLES:
                    lines.append(f"  (:{source})-[:{table}{properties}]->(:{target})")
        if rel_types := self._run(cy.RELATION_TYPE_COUNTS):
            lines.append("RELATED.type values (most common first): " + ", ".join(str(r[0]) for r in rel_types))
        if labels := self._run(cy.ENTITY_LABEL_COUNTS):
            lines.append("Entity.label values (most common first): " + ", ".join(str(r[0]) for r in labels))
        lines.append(cy.SCHEMA_NOTES)
        return "\n".join(lines)

    def check_readable(self) -> dict[str, int]:
        """Read the catalog and count the rows of every table it lists (what ``KuzuOpenCheck``'s child runs)."""
        counts: dict[str, int] = {}
        for table in self._records(cy.SHOW_TABLES):
            count = cy.count_nodes if table["type"] == "NODE" else cy.count_rels
            counts[table["name"]] = int(self._run(count(table["name"]))[0][0])
        return counts

    def counts(self) -> dict[str, int]:
        """Return the number of rows of every node and relationship table."""
        counts = {table: int(self._run(cy.count_nodes(table))[0][0]) for table in cy.NODE_TABLES}
        counts.update({table: int(self._run(cy.count_rels(table))[0][0]) for table in cy.REL_TABLES})
        return counts

    def embedded_counts(self) -> dict[str, int]:
        """The fewest points each vector collection must hold, keyed by collection name (chunks, entities, communities).

        The searchable chunks of committed document versions and the entities they name or are about were embedded
        before their commit, and every community has a report vector; a collection with fewer points lost some.
        """
        return {
            "chunks": int(self._run(cy.EMBEDDED_CHUNKS)[0][0]),
            "entities": int(self._run(cy.EMBEDDED_ENTITIES)[0][0]),
            "communities": int(self._run(cy.count_nodes("Community"))[0][0]),
        }

    def embedded_sample(self, limit: int = 32) -> dict[str, list[str]]:
        """Up to ``limit`` ids of what each vector collection must hold (see ``embedded_counts``), keyed the same."""
        return {
            name: [row[0] for row in self._run(query, {"limit": limit})] for name, query in cy.EMBEDDED_SAMPLE.items()
        }

    def searchable_chunk_ids(self) -> list[str]:
        """The ids of every stored chunk that is embedded (current or superseded; not sections), by id."""
        return [row[0] for row in self._run(cy.ALL_SEARCHABLE_CHUNK_IDS)]

    def all_entities(self) -> list[tuple[Entity, bool]]:
        """Every stored entity record with whether it was merged into another, by id."""
        return [
            (Entity(id=r[0], name=r[1], label=r[2], description=r[3]), bool(r[4])) for r in self._run(cy.ALL_ENTITIES)
        ]

    def graph_counts(self, scope: Sequence[str] | None = None) -> GraphCounts:
        """What the graph holds now: current documents and chunks, resolved entities per label, relations per type.

        Within ``scope`` (document ids; None: every document) the scope is applied in the queries: an entity counts
        when a current chunk of a document in scope names it or is about it, a relation when every passage it was
        extracted from belongs to one, and communities are not counted (their reports merge every document).
        """
        params = _scope_params(scope)
        if scope is None:
            labels = self._run(cy.STATUS_ENTITY_LABELS)
        else:  # labels as the scope names each entity, never the label another document gives it
            named = self._named_in_scope(None, scope, describe=False).values()
            labels = [[label, count] for label, count in Counter(e.label for e in named).items()]
        return GraphCounts(
            documents=int(self._run(cy.STATUS_DOCUMENTS, params)[0][0]),
            chunks=int(self._run(cy.STATUS_CHUNKS, params)[0][0]),
            entity_labels=self._most_first(labels),
            relation_types=self._most_first(self._run(cy.STATUS_RELATION_TYPES, params)),
            communities=int(self._run(cy.count_nodes("Community"))[0][0]) if scope is None else None,
        )

    def documents(self, scope: Sequence[str] | None = None, offset: int = 0, limit: int = 100) -> list[StoredDocument]:
        """The committed documents (within ``scope``: document ids; None: all), by source path."""
        rows = self._run(cy.LIST_DOCUMENTS, {**_scope_params(scope), "skip": offset, "limit": limit})
        return [
            StoredDocument(
                r[0], r[1], r[2] or "", r[3] or "", int(r[4] or 0), r[5] or "", AppliedPlan.from_json(r[6] or "")
            )
            for r in rows
        ]

    @staticmethod
    def _most_first(rows: list[list[Any]]) -> dict[str, int]:
        """(name, count) rows as a dict, the largest count first, then by name."""
        return {str(name): int(n) for name, n in sorted(rows, key=lambda r: (-int(r[1]), str(r[0])))}

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
