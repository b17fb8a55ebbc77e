"""``KuzuFactReads``: which current passages state each relation, read for the facts collection."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.data_models.fact import Fact
from agrag.components.stores.kuzu import fact_cypher as cy
from agrag.components.stores.kuzu.id_lookups import KuzuIdLookups


class KuzuFactReads(KuzuIdLookups):
    """The support of relations as the facts collection mirrors it: current chunks only."""

    def fact_support(self, relations: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
        """The current chunks that state each relation, asked for as ``(relation id, source record id)``, by id.

        A relation that is not stored, or that no current chunk states, is missing. What the graph has committed:
        an uncommitted chunk (of a version still being written) is not current.
        """
        rows = [{"id": relation_id, "a": source_id} for relation_id, source_id in sorted(set(relations))]
        support = {row[0]: list(row[1] or ()) for row in self._run_batched(cy.RELATION_CHUNK_IDS, "rows", rows)}
        current = self._current_chunks([c for chunk_ids in support.values() for c in chunk_ids])
        found = {
            relation_id: sorted(c for c in chunk_ids if c in current) for relation_id, chunk_ids in support.items()
        }
        return {relation_id: chunk_ids for relation_id, chunk_ids in found.items() if chunk_ids}

    def supported_facts(self) -> list[Fact]:
        """Every relation a current chunk states, as a fact with its records' names and its current chunks, by id."""
        current = {row[0] for row in self._run(cy.CURRENT_CHUNKS)}
        facts = []
        for relation_id, source_id, source, kind, target_id, target, description, chunk_ids in self._run(
            cy.SUPPORTED_RELATIONS
        ):
            stating = tuple(sorted(c for c in chunk_ids or () if c in current))
            if stating:
                facts.append(Fact(relation_id, source_id, source, kind, target_id, target, description or "", stating))
        return facts

    def supported_relation_count(self) -> int:
        """How many relations some chunk supports: about the points the facts collection holds."""
        return int(self._run(cy.COUNT_SUPPORTED_RELATIONS)[0][0])

    def _current_chunks(self, chunk_ids: Sequence[str]) -> set[str]:
        return {row[0] for row in self._lookup(cy.CURRENT_CHUNK_IDS, "Chunk", chunk_ids)}
