"""Cypher of status and maintenance: counts overall or within a scope, and what the vector collections must hold."""

from agrag.components.stores.kuzu.cypher_common import A as _A
from agrag.components.stores.kuzu.cypher_common import B as _B
from agrag.components.stores.kuzu.cypher_common import in_scope as _in_scope
from agrag.components.stores.kuzu.rows import EntityRow

# The status of a data dir, overall or within a document scope (`$any_doc`, `$docs` as in `_in_scope`). Within a
# scope an entity counts when a current in-scope chunk names it or is about it (or one of its members), and a
# relation when every chunk id it was extracted from names an in-scope document (the document id is the part of a
# chunk id before its first dot), as `_scoped_hop` decides what may be crossed.
_CHUNK_DOCUMENT = "split_part(cid, '.', 1)"
STATUS_DOCUMENTS = f"MATCH (d:Document) WHERE d.version <> '' AND {_in_scope('d.id')} RETURN count(d)"
STATUS_CHUNKS = f"MATCH (c:Chunk) WHERE c.current AND {_in_scope('c.document_id')} RETURN count(c)"

# What the vector collections must hold at least: a committed document version's searchable chunks and the entities
# they name or are about were embedded before the commit; every community has a report vector. `e.id`, not `e`: a
# DETACH DELETE that Kùzu 0.11.3 replays from its WAL after a kill -9 leaves the deleted node's links behind as
# phantoms that a count of nodes alone still follows (for good), and the open check then took the data dir for damaged.
EMBEDDED_CHUNKS = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE d.version <> '' AND c.document_version = d.version "
    "AND c.kind <> 'section' RETURN count(c)"
)
EMBEDDED_ENTITIES = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) "
    "WHERE d.version <> '' AND c.document_version = d.version RETURN count(DISTINCT e.id)"
)
# A few of those, to see that a collection can still read them (a damaged shard may keep its count).
EMBEDDED_SAMPLE = {
    "chunks": (
        "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE d.version <> '' AND c.document_version = d.version "
        "AND c.kind <> 'section' RETURN c.id LIMIT $limit"
    ),
    "entities": (
        "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) "
        "WHERE d.version <> '' AND c.document_version = d.version RETURN DISTINCT e.id LIMIT $limit"
    ),
    "communities": "MATCH (k:Community) RETURN k.id LIMIT $limit",
}
# Everything to embed again, for a repair of the vector collections.
ALL_SEARCHABLE_CHUNK_IDS = "MATCH (c:Chunk) WHERE c.kind <> 'section' RETURN c.id ORDER BY c.id"
ALL_ENTITIES = f"MATCH (e:Entity) RETURN {EntityRow.RETURN}, e.merged_into <> '' ORDER BY e.id"
STATUS_ENTITY_LABELS = "MATCH (e:Entity) WHERE e.merged_into = '' RETURN e.label, count(*)"
# Kùzu 0.11 cannot read a $parameter inside a list quantifier (an internal assertion fails), so the scope is bound
# to variables first.
STATUS_RELATION_TYPES = (
    "WITH $any_doc AS any_doc, CAST($docs AS STRING[]) AS docs "
    f"MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE {_A} <> {_B} "
    f"AND (any_doc OR (size(x.chunk_ids) > 0 AND all(cid IN x.chunk_ids WHERE {_CHUNK_DOCUMENT} IN docs))) "
    "RETURN x.type, count(*)"
)
