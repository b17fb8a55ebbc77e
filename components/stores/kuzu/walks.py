"""``KuzuWalks``: hop-by-hop relation walks over resolved entities, shared by retrieval and scoped evidence reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agrag.components.data_models.relation import Relation
from agrag.components.graph.relation_index import RelationIndex
from agrag.components.stores.kuzu.hop_cache import KuzuHopCache
from agrag.components.stores.kuzu.id_lookups import KuzuIdLookups
from agrag.components.stores.kuzu.relation_index_reads import KuzuRelationIndexReads
from agrag.components.stores.kuzu.retrieval_cypher import BEST_OF_HOP, CANONICAL_IDS, HOP_START, MERGED_INTO, ROWS_AT
from agrag.components.stores.kuzu.rows import RelationRow

# LIMIT of a hop that has no cap.
_NO_CAP = 2**62
# What a statement costs besides its scan, in relations scanned: measured at 1,000,000 chunks, reading one relation
# from an entity of a few relations took about 3 ms, and scanning a hub about 1 ms per thousand relations.
_STATEMENT_COST = 3_000


class KuzuWalks(KuzuRelationIndexReads, KuzuIdLookups):
    """Resolving seed ids and walking from them one hop statement at a time."""

    _merged_members: tuple[int, dict[str, list[str]]] | None = None  # (write count, members by resolved id)
    hop_cache_rows = 128
    """The best relations kept per entity record and direction between walks (``KuzuHopCache``); 0 keeps none."""
    _hop_cache: KuzuHopCache | None = None
    _row_cache: KuzuHopCache | None = None  # rows of relations a walk kept, by rank in the relation index

    def _canonical_ids(self, entity_ids: Sequence[str]) -> list[str]:
        """The resolved ids of the stored entities among ``entity_ids``, in the order asked, without repeats."""
        resolved = dict(self._lookup(CANONICAL_IDS, "Entity", entity_ids))
        return list(dict.fromkeys(resolved[i] for i in entity_ids if i in resolved))

    def _members_of(self, entity_ids: Sequence[str]) -> set[str]:
        """The records merged into any of ``entity_ids`` (read once per write of this store, then from memory)."""
        writes = self._write_count()
        cached = self._merged_members
        if cached is None or cached[0] != writes:
            members: dict[str, list[str]] = {}
            for resolved, member in self._run(MERGED_INTO):
                members.setdefault(resolved, []).append(member)
            cached = self._merged_members = (writes, members)
        return {m for e in entity_ids for m in cached[1].get(e, ())}

    def _hop_rows(self, statement: str, params: dict[str, Any]) -> list[list[Any]]:
        """The rows of a ``TRAVERSE_HOP`` statement: the best ``$cap`` of each record in ``$ids``, in its order.

        Each record's best relations come from ``KuzuHopCache`` (read on a miss with ``BEST_OF_HOP``) and are
        filtered here as the statement filters; a record whose kept relations run out before ``$cap`` pass the
        filters, and that has more, is read with the statement itself. The best ``$cap`` of all records are among
        the rows returned, so the walk keeps the same relations as one statement over every record would.
        """
        cap, keep = params["cap"], self.hop_cache_rows
        if cap > keep:
            return self._run(statement, params)
        writes = self._write_count()  # taken before reading: a write after it makes what is read here stale
        if self._hop_cache is None:
            self._hop_cache = KuzuHopCache()
        best, cache = BEST_OF_HOP[statement], self._hop_cache
        seen, types = set(params["seen"]), None if params["any_type"] else set(params["types"])
        rows: list[list[Any]] = []
        for record in params["ids"]:
            entry = cache.get(writes, best[0], record)
            if entry is None:
                found = self._best_rows(best, record, keep)
                entry = cache.put(writes, best[0], record, found, complete=len(found) < keep)
            kept = [
                list(row)
                for row in entry.rows
                if row[0] not in seen and (types is None or row[1] in types) and row[4] != row[5]
            ][:cap]
            if len(kept) < cap and not entry.complete:
                kept = self._run(statement, {**params, "ids": [record]})
            rows += kept
        return rows

    def _best_rows(self, best: tuple[str, str], record: str, keep: int) -> list[list[Any]]:
        """The best ``keep`` relations of ``record`` (``BEST_OF_HOP``): ranked by offset, then read at those offsets."""
        ranking, rows_at = best
        ranked = self._run(ranking, {"id": record, "k": keep})
        if not ranked:
            return []
        by_id = {row[0]: row for row in self._run(rows_at, {"id": record, "offsets": [o for o, _, _ in ranked]})}
        return [by_id[relation_id] for _, _, relation_id in ranked]

    def _hops(
        self,
        frontier: list[str],
        query: str | tuple[str, ...],
        *,
        extra: dict[str, Any],
        relation_types: Sequence[str] | None,
        depth: int,
        per_hop: int | None,
        limit: int | None,
    ) -> list[tuple[Relation, int, list[str]]]:
        """Run one hop statement per hop from ``frontier``: each relation once, each entity expanded once.

        A row is a ``RelationRow`` (ends resolved)[, then the chunk ids a scoped read may show]. A tuple of
        statements (``TRAVERSE_HOP``: one per direction) starts from the frontier and its merged members by primary
        key, and each hop keeps the best ``cap`` of their rows together, in the statements' own order.
        """
        indexed = self._current_relation_index() if not isinstance(query, str) and not extra else None
        if indexed is not None:
            walk = self._indexed_hops(
                indexed, frontier, tuple(query), relation_types=relation_types, depth=depth, per_hop=per_hop,
                limit=limit,
            )  # fmt: skip
            if walk is not None:
                return walk
        visited = set(frontier)
        walked: list[tuple[Relation, int, list[str]]] = []
        seen: set[str] = set()
        types = sorted(set(relation_types or ()))
        for hop in range(1, depth + 1):
            cap = _hop_cap(per_hop, limit, len(walked))
            if not frontier or cap <= 0:
                break
            params = {"ids": frontier, "seen": sorted(seen), "any_type": not types, "types": types, "cap": cap}
            if isinstance(query, str):
                rows = self._run(query, {**params, **extra})
            else:
                params["ids"] = sorted(set(frontier) | self._members_of(frontier))
                found = {row[0]: row for statement in query for row in self._hop_rows(statement, {**params, **extra})}
                rows = sorted(found.values(), key=lambda row: (-len(row[3]), row[0]))[:cap]
            reached: list[str] = []
            for row in rows:
                relation = RelationRow.read(row)
                if relation.id in seen:
                    continue
                seen.add(relation.id)
                shown = row[6:]
                walked.append((relation, hop, sorted(shown[0]) if shown else []))
                _reach(relation, visited, reached)
            frontier = reached
        return walked

    def _indexed_hops(
        self,
        indexed: tuple[int, RelationIndex],
        frontier: list[str],
        statements: tuple[str, ...],
        *,
        relation_types: Sequence[str] | None,
        depth: int,
        per_hop: int | None,
        limit: int | None,
    ) -> list[tuple[Relation, int, list[str]]] | None:
        """``_hops`` with the relations of each hop picked from the ``RelationIndex``; only their rows are read.

        The same walk as the hop statements (the index ranks as they order); None if a row read does not match the
        index (a write since it was built), for the caller to walk with the statements.
        """
        writes, index = indexed
        starts = tuple(HOP_START[statement] for statement in statements)
        types = index.type_codes(relation_types) if relation_types else None
        visited = set(frontier)
        walked: list[tuple[Relation, int, list[str]]] = []
        seen = np.empty(0, dtype=np.int64)
        for hop in range(1, depth + 1):
            cap = _hop_cap(per_hop, limit, len(walked))
            if not frontier or cap <= 0:
                break
            records = index.with_members(index.positions(frontier).values())
            ranks = index.best(records, starts, seen=seen, types=types, cap=cap)
            seen = np.concatenate([seen, ranks])
            rows = self._indexed_rows(writes, index, ranks.tolist())
            if rows is None:
                return None
            reached: list[str] = []
            for row in rows:
                relation = RelationRow.read(row)
                walked.append((relation, hop, []))
                _reach(relation, visited, reached)
            frontier = reached
        return walked

    def _indexed_rows(self, writes: int, index: RelationIndex, ranks: list[int]) -> list[list[Any]] | None:
        """The ``RelationRow`` of each relation at ``ranks``, in that order; None if one does not match the index.

        Rows read since the last write are kept (``KuzuHopCache``, by rank); the others are read a group at a time
        from an end they share (``RelationIndex.read_plan``): a read scans all of that end's relations.
        """
        if self._row_cache is None:
            self._row_cache = KuzuHopCache()
        cache, rows, missing = self._row_cache, {}, []
        for rank in ranks:
            entry = cache.get(writes, "row", str(rank))
            if entry is None:
                missing.append(rank)
            else:
                rows[rank] = list(entry.rows[0])
        for start, record, group in index.read_plan(missing, _STATEMENT_COST):
            offsets = [int(index.offsets[rank]) for rank in group]
            found = {
                row[6]: row[:6]
                for row in self._run(ROWS_AT[start], {"id": index.record_id(record), "offsets": offsets})
            }
            for rank, offset in zip(group, offsets, strict=True):
                row = found.get(offset)
                source, target = int(index.resolved[index.source[rank]]), int(index.resolved[index.target[rank]])
                if row is None or (row[4], row[5]) != (index.record_id(source), index.record_id(target)):
                    return None
                rows[rank] = list(cache.put(writes, "row", str(rank), [row], complete=True).rows[0])
        return [rows[rank] for rank in ranks]


def _reach(relation: Relation, visited: set[str], reached: list[str]) -> None:
    """Add the ends of ``relation`` not visited yet to ``visited`` and, in order (source first), to ``reached``."""
    for end in (relation.source_id, relation.target_id):
        if end not in visited:
            visited.add(end)
            reached.append(end)


def _hop_cap(per_hop: int | None, limit: int | None, walked: int) -> int:
    """The most relations the next hop may keep: ``per_hop``, and what ``limit`` leaves after ``walked``."""
    caps = [c for c in (per_hop, None if limit is None else limit - walked) if c is not None]
    return min(caps, default=_NO_CAP)
