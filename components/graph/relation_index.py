"""``RelationIndex``: every relation's ends, type and rank in arrays, so a walk picks its relations in memory."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from agrag.components.errors import StoreError


@dataclass(frozen=True)
class RelationColumns:
    """The graph's entity records and relations as columns: what ``RelationIndex`` is built from.

    Attributes:
        record_ids: Every entity record's id.
        resolved: For each record, the position in ``record_ids`` of the entity it resolved into (its own if not
            merged).
        source: Each relation's source record (a position in ``record_ids``).
        target: Each relation's target record.
        offsets: Each relation's offset in the store's relation table (how its full row is read).
        types: Each relation's type, as a position in ``type_names``.
        type_names: The relation types.
        order: The relations' positions in the columns above, in the order a walk ranks them: most supporting chunks
            first, then by id.
    """

    record_ids: Sequence[str]
    resolved: np.ndarray
    source: np.ndarray
    target: np.ndarray
    offsets: np.ndarray
    types: np.ndarray
    type_names: Sequence[str]
    order: np.ndarray


class RelationIndex:
    """The relations of each entity record, per direction, best first; numbered by rank (0 is the best).

    Why: a hop ranks all the relations of the records it starts from, and at a million chunks a hub entity has tens
    of thousands, each ranking a read of the store (tens of ms). Ranked here once, a hop filters a few arrays and
    reads from the store only the rows it keeps. The index holds ids, not rows: 28 bytes a relation.

    Example:
        index = RelationIndex(columns)
        best = index.best(index.positions(["e1"]).values(), ("a",), seen=np.empty(0, np.int32), types=None, cap=5)
    """

    def __init__(self, columns: RelationColumns) -> None:
        """Args: columns: The graph read as columns (see ``RelationColumns``).

        Raises:
            StoreError: the columns differ in length or point outside the records (an internal error).
        """
        count, records = len(columns.order), len(columns.record_ids)
        sizes = {len(columns.source), len(columns.target), len(columns.offsets), len(columns.types)}
        if sizes - {count} or len(columns.resolved) != records:
            raise StoreError("Internal error: the relation columns differ in length.")
        by_rank = np.asarray(columns.order, dtype=np.int64)
        self.source = np.asarray(columns.source, dtype=np.int32)[by_rank]
        self.target = np.asarray(columns.target, dtype=np.int32)[by_rank]
        ends = (self.source.min(), self.target.min(), self.source.max(), self.target.max()) if count else (0, 0, 0, 0)
        if min(ends[:2]) < 0 or (count and max(ends[2:]) >= records):
            raise StoreError("Internal error: a relation names an entity record the columns do not hold.")
        self.offsets = np.asarray(columns.offsets, dtype=np.int64)[by_rank]
        self.types = np.asarray(columns.types, dtype=np.int32)[by_rank]
        self.type_names = list(columns.type_names)
        self.resolved = np.asarray(columns.resolved, dtype=np.int32)
        self.loop = self.resolved[self.source] == self.resolved[self.target]  # merging made it a loop: never walked
        self._starts = {"a": _Adjacency(self.source, records), "b": _Adjacency(self.target, records)}
        ids = np.array([i.encode("utf-8") for i in columns.record_ids], dtype=np.bytes_)
        self._id_order = np.argsort(ids, kind="stable").astype(np.int32)
        self._sorted_ids = ids[self._id_order]
        self.record_ids = ids
        merged = np.flatnonzero(self.resolved != np.arange(records))
        self._members: dict[int, list[int]] = {}
        for record in merged.tolist():
            self._members.setdefault(int(self.resolved[record]), []).append(record)

    def __len__(self) -> int:
        return len(self.source)

    def positions(self, ids: Iterable[str]) -> dict[str, int]:
        """The positions of the records among ``ids`` (unknown ids are left out)."""
        asked = list(dict.fromkeys(ids))
        if not asked or not len(self._sorted_ids):
            return {}
        keys = np.array([i.encode("utf-8") for i in asked], dtype=np.bytes_)
        at = np.minimum(np.searchsorted(self._sorted_ids, keys), len(self._sorted_ids) - 1)
        found = self._sorted_ids[at] == keys
        return {i: int(self._id_order[a]) for i, a, hit in zip(asked, at.tolist(), found.tolist(), strict=True) if hit}

    def record_id(self, position: int) -> str:
        """The id of the record at ``position``."""
        return bytes(self.record_ids[position]).decode("utf-8")

    def with_members(self, records: Iterable[int]) -> list[int]:
        """``records`` and the records merged into any of them, ascending, each once."""
        found = set(records)
        for record in list(found):
            found.update(self._members.get(record, ()))
        return sorted(found)

    def type_codes(self, names: Iterable[str]) -> np.ndarray:
        """The codes of the relation types among ``names`` (a type no relation has is left out)."""
        code = {name: n for n, name in enumerate(self.type_names)}
        return np.array(sorted({code[name] for name in names if name in code}), dtype=np.int32)

    def degree(self, record: int, start: str) -> int:
        """How many relations ``record`` starts (``start`` ``a``: as source; ``b``: as target)."""
        return self._starts[start].degree(record)

    def read_plan(self, ranks: Sequence[int], statement_cost: int) -> list[tuple[str, int, list[int]]]:
        """Which ends to read the relations at ``ranks`` from: ``(start, record, ranks)`` groups covering them all.

        A read from an end scans all of that end's relations in that direction, and a statement has a fixed cost
        besides (``statement_cost``, counted in relations scanned): greedily, the end that covers the most relations
        still unread per cost goes next, so a hop's relations from one hub are read in one scan of it, and a
        relation between two hubs from the smaller.
        """
        candidates: dict[tuple[str, int], list[int]] = {}
        for rank in ranks:
            candidates.setdefault(("a", int(self.source[rank])), []).append(rank)
            candidates.setdefault(("b", int(self.target[rank])), []).append(rank)
        left, plan = set(ranks), []
        while left:

            def worth(end: tuple[str, int]) -> float:
                covered = sum(1 for rank in candidates[end] if rank in left)
                return covered / (self.degree(end[1], end[0]) + statement_cost)

            start, record = max(candidates, key=worth)
            group = [rank for rank in candidates.pop((start, record)) if rank in left]
            plan.append((start, record, group))
            left.difference_update(group)
        return plan

    def best(
        self, records: Sequence[int], starts: Sequence[str], *, seen: np.ndarray, types: np.ndarray | None, cap: int
    ) -> np.ndarray:
        """The best ``cap`` relations (by rank) that start at any of ``records`` in any of ``starts`` (``a``, ``b``).

        A relation in ``seen`` (ranks), one whose type is not in ``types`` (codes; None allows every type) and one
        whose two ends resolved into one entity are left out. Each record's relations are already in rank order, so
        only the first ``cap`` that pass of each are gathered before the best ``cap`` of all are kept.
        """
        if cap <= 0:
            return np.empty(0, dtype=np.int64)
        picked: list[np.ndarray] = []
        for start in starts:
            adjacency = self._starts[start]
            for record in records:
                ranks = adjacency.of(record)
                if not len(ranks):
                    continue
                keep = ~self.loop[ranks]
                if types is not None:
                    keep &= np.isin(self.types[ranks], types)
                if len(seen):
                    keep &= ~np.isin(ranks, seen)
                picked.append(ranks[keep][:cap])
        if not picked:
            return np.empty(0, dtype=np.int64)
        return np.unique(np.concatenate(picked))[:cap]  # unique sorts: best rank first


class _Adjacency:
    """The relations of each record in one direction, in rank order (a compressed sparse row layout)."""

    def __init__(self, start: np.ndarray, records: int) -> None:
        self._order = np.argsort(start, kind="stable").astype(np.int32)  # stable: rank order within a record
        self._bounds = np.zeros(records + 1, dtype=np.int64)
        np.cumsum(np.bincount(start, minlength=records), out=self._bounds[1:])

    def of(self, record: int) -> np.ndarray:
        return self._order[self._bounds[record] : self._bounds[record + 1]]

    def degree(self, record: int) -> int:
        return int(self._bounds[record + 1] - self._bounds[record])
