"""``KuzuWalks``: hop-by-hop relation walks over resolved entities, shared by retrieval and scoped evidence reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agrag.components.data_models.relation import Relation
from agrag.components.stores.kuzu.connection import KuzuConnection
from agrag.components.stores.kuzu.retrieval_cypher import CANONICAL_IDS
from agrag.components.stores.kuzu.rows import RelationRow

# LIMIT of a hop that has no cap.
_NO_CAP = 2**62


class KuzuWalks(KuzuConnection):
    """Resolving seed ids and walking from them one hop statement at a time."""

    def _canonical_ids(self, entity_ids: Sequence[str]) -> list[str]:
        """The resolved ids of the stored entities among ``entity_ids``, in the order asked, without repeats."""
        resolved = dict(self._run(CANONICAL_IDS, {"ids": list(entity_ids)}))
        return list(dict.fromkeys(resolved[i] for i in entity_ids if i in resolved))

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

        A row is a ``RelationRow`` (ends resolved)[, then the chunk ids a scoped read may show].
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
            for row in self._run(query, {**params, **extra}):
                relation = RelationRow.read(row)
                if relation.id in seen:
                    continue
                seen.add(relation.id)
                shown = row[6:]
                walked.append((relation, hop, sorted(shown[0]) if shown else []))
                for end in (relation.source_id, relation.target_id):
                    if end not in visited:
                        visited.add(end)
                        reached.append(end)
            frontier = reached
        return walked
