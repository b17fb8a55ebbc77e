"""``KuzuScopedNames``: what a document scope calls each resolved entity, from the records its own text names."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.data_models.entity import Entity
from agrag.components.stores.kuzu import evidence_cypher as cy
from agrag.components.stores.kuzu.connection import KuzuConnection, scope_params
from agrag.components.stores.kuzu.rows import EntityRow


class KuzuScopedNames(KuzuConnection):
    """Names, labels and descriptions of resolved entities as a scope may show them (scoped reads and counts)."""

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
            rows = self._run(cy.ALL_RECORDS_IN_SCOPE, scope_params(scope))
        elif resolved_ids:
            rows = self._run(cy.RECORDS_IN_SCOPE, {"ids": list(resolved_ids), **scope_params(scope)})
        else:
            return {}
        best: dict[str, tuple[tuple[bool, int, str], Entity]] = {}
        for resolved_id, *record_columns, links in rows:
            record = EntityRow.read(record_columns)
            key = (record.id != resolved_id, -int(links), record.id)
            if resolved_id not in best or key < best[resolved_id][0]:
                best[resolved_id] = (key, record)
        records = [record.id for _, record in best.values()] if describe else []
        outside = {row[0] for row in self._run(cy.RECORDS_NAMED_OUTSIDE, {"ids": records, "docs": sorted(scope)})}
        return {
            resolved_id: Entity(resolved_id, r.name, r.label, r.description if describe and r.id not in outside else "")
            for resolved_id, (_, r) in best.items()
        }
