"""``KuzuHopCache``: the best supported relations of each entity record a walk started from, kept until a write."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HopCacheEntry:
    """The first ``rows`` of one hop statement from one entity record, and whether they are all it has."""

    rows: tuple[tuple[Any, ...], ...]
    complete: bool
    size: int  # rows plus the items of their list columns (chunk ids): what the entry holds, in list items


class KuzuHopCache:
    """Per (statement, entity record): its best supported relations, as a walk reads them, least recently used first.

    Why: a hop from a hub entity ranks all of its relations by support, thousands at 10,000 chunks and hundreds of
    thousands at a million, before it keeps the best few; the hubs are the entities most questions name. Kept here, a
    later walk from the same record filters them in memory. Entries hold for one write count of the store (one
    process owns a data dir and every write goes through its store, so an unchanged count means an unchanged graph);
    the first lookup after a write empties the cache. The cache keeps at most ``max_items`` rows and chunk ids in
    all, dropping the least recently used entries first.

    Example:
        cache = KuzuHopCache(max_items=1_000_000)
        entry = cache.get(writes, statement, "e1") or cache.put(writes, statement, "e1", rows, complete=True)
    """

    def __init__(self, max_items: int = 2_000_000) -> None:
        """Args: max_items: The most rows plus chunk ids held in all (about 80 bytes each)."""
        self.max_items = max_items
        self._entries: OrderedDict[tuple[str, str], HopCacheEntry] = OrderedDict()
        self._writes = -1
        self._held = 0
        self._lock = threading.Lock()

    def get(self, writes: int, statement: str, record_id: str) -> HopCacheEntry | None:
        """The entry of ``record_id`` read at write count ``writes``, or None."""
        with self._lock:
            self._expire(writes)
            entry = self._entries.get((statement, record_id))
            if entry is not None:
                self._entries.move_to_end((statement, record_id))
            return entry

    def put(
        self, writes: int, statement: str, record_id: str, rows: list[list[Any]], *, complete: bool
    ) -> HopCacheEntry:
        """Keep the rows read at write count ``writes`` (read after taking that count); return the entry.

        ``complete``: the rows are every relation the statement has for the record, not its first ones.
        """
        lists = sum(len(value) for row in rows for value in row if isinstance(value, list | tuple))  # chunk ids
        entry = HopCacheEntry(tuple(map(tuple, rows)), complete, len(rows) + lists)
        with self._lock:
            self._expire(writes)
            if writes != self._writes or entry.size > self.max_items:  # read before a write that has since ended
                return entry
            old = self._entries.pop((statement, record_id), None)
            self._held += entry.size - (old.size if old else 0)
            self._entries[(statement, record_id)] = entry
            while self._held > self.max_items:
                self._held -= self._entries.popitem(last=False)[1].size
            return entry

    def __len__(self) -> int:
        return len(self._entries)

    def _expire(self, writes: int) -> None:
        if writes > self._writes:
            self._entries.clear()
            self._held = 0
            self._writes = writes
