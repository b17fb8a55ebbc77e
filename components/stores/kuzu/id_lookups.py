"""``KuzuIdLookups``: rows of a few nodes by primary key, without a scan of their whole table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agrag.components.stores.kuzu.connection import KuzuConnection

_UNWIND = "UNWIND $ids AS i "
_TABLE_ROWS = "MATCH (x:{table}) RETURN count(*)"


def one_id_form(unwind: str) -> str:
    """The statement ``UNWIND $ids AS i MATCH (x:T) WHERE x.id = i ...`` for one id ``$i``.

    Raises:
        ValueError: ``unwind`` does not have that form.
    """
    head, _, rest = unwind.partition(_UNWIND)
    one = rest.replace(".id = i ", ".id = $i ", 1)
    if head or not rest or one == rest:
        raise ValueError(f"Not a lookup of `UNWIND $ids AS i ... WHERE x.id = i`: {unwind!r}")
    return one


class KuzuIdLookups(KuzuConnection):
    """Lookups of nodes by id that start from each id's primary key.

    Why: Kùzu 0.11.3 plans ``UNWIND $ids AS i MATCH (x:T) WHERE x.id = i`` as a hash join over a scan of the whole
    table, whatever the number of ids: 20 ms at 156,000 entities and 78 ms at 100,000 chunks (their texts are read),
    ten times that at a million. A statement with one scalar id starts from the primary key (0.2 ms an entity, 0.9 ms
    a chunk). A lookup of n ids runs one statement per id when the table holds more than ``per_id_rows`` rows per
    asked id, else the single statement (on a small graph the scan is cheaper than n statements).
    """

    per_id_rows = 1_500
    """Rows of the table per asked id above which each id is looked up by its own statement; 0: always."""
    _table_rows_cache: dict[str, tuple[int, int]] | None = None  # table -> (write count, rows), made on first use

    def _lookup(self, unwind: str, table: str, ids: Sequence[str]) -> list[list[Any]]:
        """The rows of ``unwind`` (an ``UNWIND $ids AS i ... WHERE x.id = i`` statement on ``table``) for ``ids``."""
        asked = sorted(set(ids))
        if not asked:
            return []
        if len(asked) * self.per_id_rows < self._table_rows(table):
            one = one_id_form(unwind)
            return [row for i in asked for row in self._run(one, {"i": i})]
        return self._run(unwind, {"ids": asked})

    def _table_rows(self, table: str) -> int:
        """The rows of a node table, counted once per write count of this store."""
        writes = self._write_count()
        if self._table_rows_cache is None:
            self._table_rows_cache = {}
        cached = self._table_rows_cache.get(table)
        if cached is None or cached[0] != writes:
            ((rows,),) = self._run(_TABLE_ROWS.format(table=table))
            cached = self._table_rows_cache[table] = (writes, int(rows))
        return cached[1]
