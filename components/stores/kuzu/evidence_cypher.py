"""Cypher of scoped evidence reads: every statement applies the document scope (`$any_doc`, `$docs`) itself."""

from agrag.components.stores.kuzu.cypher_common import (
    A_IN_FRONTIER as _A_IN_FRONTIER,
)
from agrag.components.stores.kuzu.cypher_common import (
    B_IN_FRONTIER as _B_IN_FRONTIER,
)
from agrag.components.stores.kuzu.cypher_common import (
    CANONICAL as _CANONICAL,
)
from agrag.components.stores.kuzu.cypher_common import (
    A as _A,
)
from agrag.components.stores.kuzu.cypher_common import (
    B as _B,
)
from agrag.components.stores.kuzu.cypher_common import (
    S as _S,
)
from agrag.components.stores.kuzu.cypher_common import (
    in_scope as _in_scope,
)
from agrag.components.stores.kuzu.cypher_common import (
    visible as _visible,
)
from agrag.components.stores.kuzu.rows import ChunkRow, EntityRow, RelationRow

# A chunk never committed (`current` NULL) is read by no one: every read by id asks `c.current IS NOT NULL`.
GET_CHUNKS_IN_SCOPE = (
    f"MATCH (c:Chunk) WHERE c.id IN $ids AND c.current IS NOT NULL AND {_in_scope('c.document_id')} "
    f"RETURN {ChunkRow.RETURN}"
)

# The chunks next to chunk `$id` (`s`, itself in scope) in one document version: one statement per direction. A
# section chunk is the PARENT of the text chunks cut from it; NEXT is reading order.
_NEIGHBOUR_SCOPE = (
    f"{_in_scope('s.document_id')} AND {_in_scope('c.document_id')} "
    "AND c.document_id = s.document_id AND c.document_version = s.document_version "
    "AND s.current IS NOT NULL AND c.current IS NOT NULL"
)
CHUNK_NEIGHBOURS = {
    "parent": f"MATCH (s:Chunk {{id: $id}})-[:PARENT]->(c:Chunk) WHERE {_NEIGHBOUR_SCOPE} RETURN {ChunkRow.RETURN}",
    "children": (
        f"MATCH (c:Chunk)-[:PARENT]->(s:Chunk {{id: $id}}) WHERE {_NEIGHBOUR_SCOPE} "
        f"RETURN {ChunkRow.RETURN} ORDER BY c.ord, c.id"
    ),
    "siblings": (
        "MATCH (s:Chunk {id: $id})-[:PARENT]->(p:Chunk)<-[:PARENT]-(c:Chunk) "
        f"WHERE c.id <> s.id AND {_NEIGHBOUR_SCOPE} RETURN {ChunkRow.RETURN} ORDER BY c.ord, c.id"
    ),
    "previous": (
        f"MATCH (c:Chunk)-[:NEXT]->(s:Chunk {{id: $id}}) WHERE {_NEIGHBOUR_SCOPE} "
        f"RETURN {ChunkRow.RETURN} ORDER BY c.ord, c.id"
    ),
    "next": (
        f"MATCH (s:Chunk {{id: $id}})-[:NEXT]->(c:Chunk) WHERE {_NEIGHBOUR_SCOPE} "
        f"RETURN {ChunkRow.RETURN} ORDER BY c.ord, c.id"
    ),
}

# The chunks of one document version whose [start_offset, end_offset) overlaps [$span_start, $span_end), from the
# document's primary key, so the cost is the document's chunks.
VERSION_CHUNKS_OVERLAPPING = (
    "MATCH (d:Document {id: $document_id})-[:HAS_CHUNK]->(c:Chunk) "
    "WHERE c.document_version = $version AND c.start_offset < $span_end AND c.end_offset > $span_start "
    "AND c.current IS NOT NULL "
    f"AND {_in_scope('d.id')} RETURN {ChunkRow.RETURN} ORDER BY c.start_offset, c.ord, c.id"
)

DOCUMENT_VERSION_INFO = f"MATCH (d:Document) WHERE d.id IN $ids AND {_in_scope('d.id')} RETURN d.id, d.version, d.title"


# One row per asked id (`asked`) whose resolved entity is visible.
VISIBLE_ENTITIES = (
    f"MATCH (s:Entity) WHERE s.id IN $ids WITH s.id AS asked, {_S} AS rid "
    f"MATCH (e:Entity {{id: rid}}) WHERE {_visible('e.id')} "
    f"RETURN asked, {EntityRow.RETURN}"
)
# The current in-scope chunks about or mentioning the asked entities' resolved entities (or their members): one row
# per (resolved entity, chunk), best first: chunks about it, then by mentions (its members' added in), then by id.
SUPPORT_IN_SCOPE = (
    f"MATCH (s:Entity) WHERE s.id IN $ids WITH collect(DISTINCT {_S}) AS rids "
    "MATCH (c:Chunk)-[l:MENTIONS|:ABOUT]->(e:Entity) "
    f"WHERE (e.id IN rids OR e.merged_into IN rids) AND c.current AND {_in_scope('c.document_id')} "
    f"WITH {_CANONICAL} AS rid, c.id AS cid, max(CASE WHEN label(l) = 'ABOUT' THEN 1 ELSE 0 END) AS about, "
    "sum(coalesce(l.count, 0)) AS mentions "
    "RETURN rid, cid ORDER BY rid, about DESC, mentions DESC, cid"
)

# The entity records (a resolved entity and its merged members) that current in-scope chunks name or are about, one
# row per record with its resolved id and how many such links it has: what a scope may call a resolved entity.
RECORDS_IN_SCOPE = (
    f"MATCH (s:Entity) WHERE s.id IN $ids WITH collect(DISTINCT {_S}) AS rids "
    "MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) "
    f"WHERE (e.id IN rids OR e.merged_into IN rids) AND c.current AND {_in_scope('c.document_id')} "
    f"RETURN {_CANONICAL} AS rid, {EntityRow.RETURN}, count(*) AS links"
)
# Every record current in-scope chunks name or are about (as RECORDS_IN_SCOPE, for the whole scope).
ALL_RECORDS_IN_SCOPE = (
    f"MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) WHERE c.current AND {_in_scope('c.document_id')} "
    f"RETURN {_CANONICAL} AS rid, {EntityRow.RETURN}, count(*) AS links"
)
# The records among `$ids` that some chunk (any version) of a document outside the scope names or is about.
RECORDS_NAMED_OUTSIDE = (
    "MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) WHERE e.id IN $ids "
    "AND NOT c.document_id IN CAST($docs AS STRING[]) RETURN DISTINCT e.id"
)
# The resolved ids of the records with this normalized name that current in-scope chunks name or are about.
NAMED_IN_SCOPE = (
    "MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) WHERE e.norm_name = $norm_name AND c.current "
    f"AND {_in_scope('c.document_id')} RETURN DISTINCT {_CANONICAL}"
)


# One hop of a walk within a scope (both directions; `$ids`, `$seen`, `$types`, `$cap` as in `_hop`). Each supporting
# chunk id is looked up by primary key and the counts compared: a relation is crossed only if every chunk id names a
# stored chunk of an in-scope document (any version), so nothing an out-of-scope document contributed to shows, and
# never with no chunk id. Returned with the chunk ids that are current and in scope (possibly none), those with the
# most of them first. `visible` also asks that both ends be visible; without it every relation with a chunk id is
# crossed (for a walk over every document, `$any_doc` true).
def _scoped_hop(visible: bool) -> str:
    ends = f" AND {_visible('a_id')} AND {_visible('b_id')}" if visible else ""
    return (
        "MATCH (a:Entity)-[x:RELATED]->(b:Entity) "
        f"WHERE ({_A_IN_FRONTIER} OR {_B_IN_FRONTIER}) AND size(x.chunk_ids) > 0 "
        "AND NOT x.id IN CAST($seen AS STRING[]) AND ($any_type OR x.type IN CAST($types AS STRING[])) "
        f"AND {_A} <> {_B} "
        f"WITH x, {_A} AS a_id, {_B} AS b_id UNWIND x.chunk_ids AS cid OPTIONAL MATCH (c:Chunk {{id: cid}}) "
        f"WITH x, a_id, b_id, count(*) AS n, count(CASE WHEN {_in_scope('c.document_id')} THEN 1 END) AS n_in, "
        f"collect(DISTINCT CASE WHEN c.current AND {_in_scope('c.document_id')} THEN c.id END) AS shown "
        f"WHERE n_in = n{ends} "
        "WITH x, a_id, b_id, coalesce(shown, CAST([] AS STRING[])) AS shown "
        f"RETURN {RelationRow.returning(source_id='a_id', target_id='b_id')}, shown "
        "ORDER BY size(shown) DESC, size(x.chunk_ids) DESC, x.id LIMIT $cap"
    )


SCOPED_HOP = {"scoped": _scoped_hop(visible=True), "all": _scoped_hop(visible=False)}
