"""Cypher of the fact reads: each relation with its records' names and the passages that state it now."""

# Each `$rows` entry names a relation by its id and the record it starts from (`a`): the walk starts from that
# entity's primary key instead of scanning every relation for an id (relations have no index of their own).
_FACT = "x.id, a.id, a.name, x.type, b.id, b.name, x.description, x.chunk_ids"
RELATION_FACTS = (
    f"UNWIND $rows AS r MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE a.id = r.a AND x.id = r.id RETURN {_FACT}"
)
# The same for one relation, from its source's primary key: on a large graph Kùzu plans the `UNWIND` form as a hash
# join over a scan of every relation (see ``KuzuIdLookups``), which one statement a relation avoids.
ONE_RELATION_FACT = f"MATCH (a:Entity {{id: $a}})-[x:RELATED]->(b:Entity) WHERE x.id = $id RETURN {_FACT}"
# Which of `$ids` are current chunks (committed, of their document's current version): the lookup of
# ``KuzuIdLookups``, which starts from each id's primary key on a large graph.
CURRENT_CHUNK_IDS = "UNWIND $ids AS i MATCH (c:Chunk) WHERE c.id = i AND c.current RETURN c.id"
# Every relation some chunk supports, with the names of its records (for ``agrag repair``).
SUPPORTED_RELATIONS = (
    f"MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE size(x.chunk_ids) > 0 RETURN {_FACT} ORDER BY x.id"
)
CURRENT_CHUNKS = "MATCH (c:Chunk) WHERE c.current RETURN c.id"
# Relations some chunk supports: what the facts collection should hold about as many points as (``agrag status``).
COUNT_SUPPORTED_RELATIONS = "MATCH (:Entity)-[x:RELATED]->(:Entity) WHERE size(x.chunk_ids) > 0 RETURN count(*)"
