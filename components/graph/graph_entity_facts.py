"""``GraphEntityFacts``: the facts current passages of a scope state about an entity, those most like a query first."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.data_models.evidence import FACTS_PER_ENTITY, EvidenceScope, FactEvidence
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.data_models.relation import Relation
from agrag.components.stores.graph_read_roles import GraphEvidenceReader
from agrag.components.stores.vector_store import VectorStore

CANDIDATES = 50  # relations read around an entity before the best few are kept


class GraphEntityFacts:
    """The facts about each entity, as the scope sees them: ``Victor Hale -[owns]-> Osprey Ceramics`` and passages.

    A fact is a relation touching the entity that a current passage in the scope states; it is read as the graph walk
    reads it within a scope (``scoped_relations``: every passage of it in the scope, both ends visible, named as the
    scope names them), so a fact never tells of a document outside the scope. With the facts collection and a query
    vector, the facts most like the query come first; else the best supported ones.

    Usage:
        ```python
        facts = GraphEntityFacts(store.graph, store.facts).of(["e1a2…"], EvidenceScope(), query_vector)
        print([f.fact for f in facts["e1a2…"]])  # ["Victor Hale -[owns]-> Osprey Ceramics", ...]
        ```
    """

    def __init__(self, graph: GraphEvidenceReader, facts: VectorStore | None = None) -> None:
        """Read relations from ``graph``; rank them by their vectors in ``facts`` when given."""
        self.graph = graph
        self.facts = facts

    def of(
        self,
        entity_ids: Sequence[str],
        scope: EvidenceScope,
        query_vector: Sequence[float] | None = None,
        per_entity: int = FACTS_PER_ENTITY,
    ) -> dict[str, tuple[FactEvidence, ...]]:
        """Up to ``per_entity`` facts about each of ``entity_ids`` (resolved ids), keyed by id; none: missing."""
        stated: dict[str, list[tuple[Relation, list[str]]]] = {}
        for entity_id in dict.fromkeys(entity_ids):
            walked = self.graph.scoped_relations([entity_id], scope.documents, depth=1, limit=CANDIDATES)
            found = [(relation, chunk_ids) for relation, _, chunk_ids in walked if chunk_ids]
            if found:
                stated[entity_id] = found
        ends = sorted({e for found in stated.values() for r, _ in found for e in (r.source_id, r.target_id)})
        names = {e.id: e.name for e in self.graph.visible_entities(ends, scope.documents)} if ends else {}
        similar = self._similarities([r.id for found in stated.values() for r, _ in found], query_vector)
        out: dict[str, tuple[FactEvidence, ...]] = {}
        for entity_id, found in stated.items():
            visible = [(r, c) for r, c in found if r.source_id in names and r.target_id in names]
            ranked = sorted(enumerate(visible), key=lambda item: (-similar.get(item[1][0].id, -2.0), item[0]))
            out[entity_id] = tuple(_evidence(r, c, names) for _, (r, c) in ranked[:per_entity])
        return {entity_id: facts for entity_id, facts in out.items() if facts}

    def _similarities(self, relation_ids: list[str], query_vector: Sequence[float] | None) -> dict[str, float]:
        if self.facts is None or query_vector is None or not relation_ids:
            return {}
        return self.facts.similarities(query_vector, sorted(set(relation_ids)))


def _evidence(relation: Relation, chunk_ids: list[str], names: dict[str, str]) -> FactEvidence:
    statement = f"{names[relation.source_id]} -[{relation.type}]-> {names[relation.target_id]}"
    passages = tuple(str(EvidenceId.of_chunk_id(c)) for c in chunk_ids)
    return FactEvidence(relation.id, statement, relation.source_id, relation.target_id, passages)
