"""Everything a knowledge store holds, as plain sorted rows: two stores hold the same data when their dumps are equal.

Merge log ids carry the run's id (a time and a random part), so the dump keeps only their position in the run.
"""

from __future__ import annotations

from typing import Any

from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_store import STATUS_FIELD, PayloadFilter

_QUERIES = {
    "documents": "MATCH (d:Document) RETURN d.id, d.version, d.chunk_count, d.config_hash ORDER BY d.id",
    "chunks": "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) RETURN d.id, c.id, c.current ORDER BY c.id",
    "entities": "MATCH (e:Entity) RETURN e.id, e.name, e.label, e.description, e.merged_into ORDER BY e.id",
    "relations": "MATCH (a:Entity)-[x:RELATED]->(b:Entity) "
    "RETURN x.id, a.id, b.id, x.type, x.description, x.chunk_ids ORDER BY x.id",
    "mentions": "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) RETURN c.id, e.id, m.count ORDER BY c.id, e.id",
    "about": "MATCH (c:Chunk)-[:ABOUT]->(e:Entity) RETURN c.id, e.id ORDER BY c.id, e.id",
    "next": "MATCH (a:Chunk)-[:NEXT]->(b:Chunk) RETURN a.id, b.id ORDER BY a.id, b.id",
}


def dump(store: KnowledgeStore) -> dict[str, Any]:
    """The graph tables, the merge log, the candidates, the communities and every vector's id and status."""
    graph = store.graph
    out: dict[str, Any] = {name: graph.run_read_only(query, max_rows=10**7)[1] for name, query in _QUERIES.items()}
    out["merge_log"] = sorted(
        (e.id.rsplit("-", 1)[1], e.member_id, e.resolved_id, e.decision, e.rule, round(e.score, 6), e.undone)
        for e in graph.merge_log()
    )
    out["candidates"] = sorted((c.entity_id, c.other_id, c.rule, round(c.score, 6)) for c in graph.candidates())
    out["communities"] = sorted((c.id, c.level, c.entity_ids, c.parent_id) for c in graph.communities())
    chunk_ids = [row[1] for row in out["chunks"]]
    entity_ids = [row[0] for row in out["entities"]]
    out["chunk_vectors"] = sorted((p.id, p.payload.get(STATUS_FIELD)) for p in store.chunks.fetch(chunk_ids))
    out["entity_vectors"] = sorted((p.id, p.payload.get(STATUS_FIELD)) for p in store.entities.fetch(entity_ids))
    out["fact_vectors"] = fact_vectors(store)
    out["counts"] = store.counts()
    return out


def fact_vectors(store: KnowledgeStore) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    """Every fact point: its id, status, passages and documents."""
    points = store.facts.fetch(store.facts.matching_ids(PayloadFilter()))
    return sorted(
        (p.id, p.payload.get(STATUS_FIELD), tuple(p.payload["chunk_ids"]), tuple(p.payload["document_ids"]))
        for p in points
    )


def facts_of_graph(store: KnowledgeStore) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    """What the fact points must be: one current point per relation a current chunk states, with those chunks."""
    return sorted(
        (f.id, "current", f.chunk_ids, tuple(sorted({c.split(".", 1)[0] for c in f.chunk_ids})))
        for f in store.graph.supported_facts()
    )
