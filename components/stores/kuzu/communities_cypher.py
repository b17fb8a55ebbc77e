"""Cypher of communities: the weighted entity graph, what reports are written from, the stored hierarchy."""

from agrag.components.stores.kuzu.cypher_common import CANONICAL as _CANONICAL
from agrag.components.stores.kuzu.cypher_common import A as _A
from agrag.components.stores.kuzu.cypher_common import B as _B
from agrag.components.stores.kuzu.rows import CommunityRow, RelationRow

# Communities: the weighted graph of resolved entities, then the hierarchy, replaced as a whole.
ENTITY_GRAPH_EDGES = f"MATCH (a:Entity)-[x:RELATED]->(b:Entity) RETURN {_A}, {_B}, size(x.chunk_ids)"
DELETE_COMMUNITIES = "MATCH (k:Community) DETACH DELETE k"
UPSERT_COMMUNITIES = (
    "UNWIND $rows AS r CREATE (k:Community {id: r.id, level: r.level, parent_id: r.parent_id, size: r.size, "
    "title: r.title, summary: r.summary, rating: r.rating, findings: r.findings, method: r.method})"
)
GET_COMMUNITIES = (
    "MATCH (k:Community) OPTIONAL MATCH (e:Entity)-[:IN_COMMUNITY]->(k) "
    f"RETURN {CommunityRow.RETURN} "
    "ORDER BY k.level, k.id"
)
# Mentions of the current chunks for a set of resolved entities: what a community report is written from.
# Both start from each id's primary key and walk its links (`$ids` holds the resolved entities and their merged
# members): an `IN $ids` filter over every mention or relation would scan the whole table for each community batch.
MENTIONS_OF = (
    f"UNWIND $ids AS i MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE e.id = i AND c.current RETURN c.id, {_CANONICAL}"
)
# Every relation out of `$ids`, with its raw target last: the caller keeps those whose target is in the set (a
# `list_contains($among, b.id)` filter here cost a scan of the whole list per relation: 60 s at 10,000 chunks).
RELATIONS_FROM = (
    "UNWIND $ids AS i MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE a.id = i "
    f"RETURN {RelationRow.returning(source_id=_A, target_id=_B)}, b.id"
)
# The same two reads over a range of entity ids, for a batch that asks for a large share of the entities: Kùzu
# scans the range and walks its links, where a statement per 2,000 ids joins each batch against its table (every
# report input of the 100,000-chunk graph: 81.1 s by ids, 24.6 s by ranges of 20,000 ids; for 40% of its entities
# 36.8 and 19.7 s; the same rows).
# The caller keeps the rows whose raw entity id (last) it asked for.
ENTITY_COUNT = "MATCH (e:Entity) RETURN count(e)"
RELATIONS_IN_RANGE = (
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE a.id >= $lo AND a.id <= $hi "
    f"RETURN {RelationRow.returning(source_id=_A, target_id=_B)}, b.id, a.id"
)
MENTIONS_IN_RANGE = (
    "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE e.id >= $lo AND e.id <= $hi AND c.current "
    f"RETURN c.id, {_CANONICAL}, e.id"
)
COMMUNITIES_OF_ENTITIES = (
    "UNWIND $ids AS i MATCH (e:Entity)-[:IN_COMMUNITY]->(k:Community) WHERE e.id = i RETURN DISTINCT k.id"
)
