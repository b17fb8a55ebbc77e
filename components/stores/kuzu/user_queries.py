"""``KuzuUserQueries``: read-only Cypher a user or a model wrote, checked, capped and run; the schema described."""

from __future__ import annotations

import contextlib
import datetime
import time
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import kuzu

from agrag.components.errors import GraphQueryRefusedError, GraphQueryTimeoutError, GraphQueryTooLargeError, StoreError
from agrag.components.stores.kuzu import query_cypher as cy
from agrag.components.stores.kuzu import schema_cypher as schema
from agrag.components.stores.kuzu.connection import MB, PARAM, KuzuConnection

# Kùzu's internal fields of a node or relationship value: offsets that mean nothing outside this process.
_INTERNAL_FIELDS = frozenset({"_id", "_src", "_dst"})
# What the rows of a user- or model-written query may hold by default (text counted by characters).
READ_ONLY_MAX_BYTES = 4 * MB


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


class KuzuUserQueries(KuzuConnection):
    """Text-to-Cypher's side of the store: one read-only statement at a time, and the schema it may read."""

    _schema_cache: tuple[int, str] | None = None  # (write count, schema text), made on first use

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
        (``query_cypher.unbounded_problem``). It then runs inside a read-only transaction, which Kùzu ends on any
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
        missing = set(PARAM.findall(cy.clause_text(query))) - given.keys()
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

        Leaves out the store's internal tables, and adds the most common relation types and entity labels. Read
        once per write count of this store: it takes some twenty queries and only a write changes it.
        """
        writes = self._write_count()
        if self._schema_cache is None or self._schema_cache[0] != writes:
            self._schema_cache = (writes, self._read_schema_text())
        return self._schema_cache[1]

    def _read_schema_text(self) -> str:
        tables = sorted(
            (t for t in self._records(schema.SHOW_TABLES) if t["name"] not in cy.INTERNAL_TABLES),
            key=lambda t: t["name"],
        )
        lines = ["Node tables:"]
        for table in (t["name"] for t in tables if t["type"] == "NODE"):
            columns = [
                f"{c['name']} {c['type']}" + (" PRIMARY KEY" if c.get("primary key") else "")
                for c in self._records(schema.table_info(table))
            ]
            lines.append(f"  {table}({', '.join(columns)})")
        lines.append("Relationship tables:")
        for table in (t["name"] for t in tables if t["type"] == "REL"):
            columns = [f"{c['name']} {c['type']}" for c in self._records(schema.table_info(table))]
            properties = f" {{{', '.join(columns)}}}" if columns else ""
            for ends in self._records(schema.show_connection(table)):
                source, target = ends["source table name"], ends["destination table name"]
                if not {source, target} & cy.INTERNAL_TABLES:
                    lines.append(f"  (:{source})-[:{table}{properties}]->(:{target})")
        if rel_types := self._run(cy.RELATION_TYPE_COUNTS):
            lines.append("RELATED.type values (most common first): " + ", ".join(str(r[0]) for r in rel_types))
        if labels := self._run(cy.ENTITY_LABEL_COUNTS):
            lines.append("Entity.label values (most common first): " + ", ".join(str(r[0]) for r in labels))
        lines.append(cy.SCHEMA_NOTES)
        return "\n".join(lines)
