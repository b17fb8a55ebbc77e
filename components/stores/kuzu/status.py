"""``KuzuStatus``: status and maintenance reads of the Kùzu store (counts, what the vectors must hold, repairs)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.store_status import GraphCounts
from agrag.components.stores.kuzu import schema_cypher as schema
from agrag.components.stores.kuzu import status_cypher as cy
from agrag.components.stores.kuzu.connection import scope_params
from agrag.components.stores.kuzu.rows import EntityRow
from agrag.components.stores.kuzu.scoped_names import KuzuScopedNames
from agrag.components.stores.kuzu.table_counts import count_tables


class KuzuStatus(KuzuScopedNames):
    """Row counts, graph counts overall or within a scope, and what each vector collection must hold."""

    def check_readable(self) -> dict[str, int]:
        """Read the catalog and count the rows of every table it lists (what ``KuzuOpenCheck``'s child runs)."""
        return count_tables(self._run)

    def counts(self) -> dict[str, int]:
        """Return the number of rows of every node and relationship table."""
        counts = {table: int(self._run(schema.count_nodes(table))[0][0]) for table in schema.NODE_TABLES}
        counts.update({table: int(self._run(schema.count_live_rels(table))[0][0]) for table in schema.REL_TABLES})
        return counts

    def embedded_counts(self) -> dict[str, int]:
        """The fewest points each vector collection must hold, keyed by collection name (chunks, entities, communities).

        The searchable chunks of committed document versions and the entities they name or are about were embedded
        before their commit, and every community has a report vector; a collection with fewer points lost some.
        """
        return {
            "chunks": int(self._run(cy.EMBEDDED_CHUNKS)[0][0]),
            "entities": int(self._run(cy.EMBEDDED_ENTITIES)[0][0]),
            "communities": int(self._run(schema.count_nodes("Community"))[0][0]),
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
        return [(EntityRow.read(entity), bool(merged)) for *entity, merged in self._run(cy.ALL_ENTITIES)]

    def graph_counts(self, scope: Sequence[str] | None = None) -> GraphCounts:
        """What the graph holds now: current documents and chunks, resolved entities per label, relations per type.

        Within ``scope`` (document ids; None: every document) the scope is applied in the queries: an entity counts
        when a current chunk of a document in scope names it or is about it, a relation when every passage it was
        extracted from belongs to one, and communities are not counted (their reports merge every document).
        """
        params = scope_params(scope)
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
            communities=int(self._run(schema.count_nodes("Community"))[0][0]) if scope is None else None,
        )

    @staticmethod
    def _most_first(rows: list[list[Any]]) -> dict[str, int]:
        """(name, count) rows as a dict, the largest count first, then by name."""
        return {str(name): int(n) for name, n in sorted(rows, key=lambda row: (-int(row[1]), str(row[0])))}
