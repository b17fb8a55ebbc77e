"""``KuzuFactReads``: which current passages state each relation, read for the facts collection."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agrag.components.data_models.fact import Fact
from agrag.components.stores.kuzu import fact_cypher as cy
from agrag.components.stores.kuzu.id_lookups import KuzuIdLookups


class KuzuFactReads(KuzuIdLookups):
    """The support of relations as the facts collection mirrors it: current chunks only."""

    def stated_facts(self, relations: Sequence[tuple[str, str]], incoming: Sequence[str] = ()) -> dict[str, Fact]:
        """Each relation as a fact: its records' names, its type and sentence, the current chunks that state it.

        Asked for as ``(relation id, source record id)``, keyed by id. A relation that is not stored, or that no
        current chunk states, is missing. What the graph has committed: an uncommitted chunk (of a version still being
        written) is not current, unless it is one of ``incoming`` (the chunks of the commit being written, read as
        its commit will leave them). On a graph of many entities per relation asked, each relation is read by its own
        statement from its source (as ``KuzuIdLookups`` does).
        """
        rows = [{"id": relation_id, "a": source_id} for relation_id, source_id in sorted(set(relations))]
        if rows and len(rows) * self.per_id_rows < self._table_rows("Entity"):
            read = [hit for row in rows for hit in self._run(cy.ONE_RELATION_FACT, row)]
        else:
            read = self._run_batched(cy.RELATION_FACTS, "rows", rows)
        stating = [c for row in read for c in row[7] or ()]
        return self._stated(read, self._current_chunks(stating) | (set(stating) & set(incoming)))

    def supported_facts(self) -> list[Fact]:
        """Every relation a current chunk states, as a fact with its records' names and its current chunks, by id."""
        current = {row[0] for row in self._run(cy.CURRENT_CHUNKS)}
        return list(self._stated(self._run(cy.SUPPORTED_RELATIONS), current).values())

    @staticmethod
    def _stated(rows: Sequence[Sequence[Any]], current: set[str]) -> dict[str, Fact]:
        facts = {}
        for relation_id, source_id, source, kind, target_id, target, description, chunk_ids in rows:
            stating = tuple(sorted(c for c in chunk_ids or () if c in current))
            if stating:
                facts[str(relation_id)] = Fact(
                    str(relation_id),
                    str(source_id),
                    str(source or ""),
                    str(kind or ""),
                    str(target_id),
                    str(target or ""),
                    str(description or ""),
                    stating,
                )
        return facts

    def supported_relation_count(self) -> int:
        """How many relations some chunk supports: about the points the facts collection holds."""
        return int(self._run(cy.COUNT_SUPPORTED_RELATIONS)[0][0])

    def _current_chunks(self, chunk_ids: Sequence[str]) -> set[str]:
        return {row[0] for row in self._lookup(cy.CURRENT_CHUNK_IDS, "Chunk", chunk_ids)}
