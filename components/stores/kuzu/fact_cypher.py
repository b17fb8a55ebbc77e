"""Cypher of the fact reads: which passages state each relation now, and every relation that has one."""

# Each `$rows` entry names a relation by its id and the record it starts from (`a`): the walk starts from that
# entity's primary key instead of scanning every relation for an id (relations have no index of their own).
RELATION_CHUNK_IDS = (
    "UNWIND $rows AS r MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE a.id = r.a AND x.id = r.id "
    "RETURN x.id, x.chunk_ids"
)
# Which of `$ids` are current chunks (committed, of their document's current version): the lookup of
# ``KuzuIdLookups``, which starts from each id's primary key on a large graph.
CURRENT_CHUNK_IDS = "UNWIND $ids AS i MATCH (c:Chunk) WHERE c.id = i AND c.current RETURN c.id"
# Every relation some chunk supports, with the names of its records (for ``agrag repair``).
SUPPORTED_RELATIONS = (
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE size(x.chunk_ids) > 0 "
    "RETURN x.id, a.id, a.name, x.type, b.id, b.name, x.description, x.chunk_ids ORDER BY x.id"
)
CURRENT_CHUNKS = "MATCH (c:Chunk) WHERE c.current RETURN c.id"
# Relations some chunk supports: what the facts collection should hold about as many points as (``agrag status``).
COUNT_SUPPORTED_RELATIONS = "MATCH (:Entity)-[x:RELATED]->(:Entity) WHERE size(x.chunk_ids) > 0 RETURN count(*)"
