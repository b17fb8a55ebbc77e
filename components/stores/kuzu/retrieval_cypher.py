"""Cypher of retrieval reads: chunks and entities by id, support, the passage graph, graph walks, name lookups."""

from agrag.components.data_models.traversal_direction import TraversalDirection
from agrag.components.stores.kuzu.cypher_common import (
    CANONICAL as _CANONICAL,
)
from agrag.components.stores.kuzu.cypher_common import (
    A as _A,
)
from agrag.components.stores.kuzu.cypher_common import (
    B as _B,
)
from agrag.components.stores.kuzu.rows import ChunkRow, EntityRow, MergedMemberRow, RelationRow

# Lookups by id start from each id's primary key (`UNWIND`): `c.id IN $ids` would scan the whole table per query.
# A chunk never committed (`current` NULL) is read by no one.
GET_CHUNKS = f"UNWIND $ids AS i MATCH (c:Chunk) WHERE c.id = i AND c.current IS NOT NULL RETURN {ChunkRow.RETURN}"

GET_ENTITIES = f"UNWIND $ids AS i MATCH (e:Entity) WHERE e.id = i RETURN {EntityRow.RETURN}"
# Every record merged into another, with its active merge-log line (a merge never rewrites edges: the member keeps
# its own record with a pointer, so the names and ids it brought are still there to show).
MERGED_MEMBERS = (
    "MATCH (e:Entity) WHERE e.merged_into <> '' "
    "OPTIONAL MATCH (m:MergeLog) WHERE m.member_id = e.id AND m.decision = 'merged' AND NOT m.undone "
    f"RETURN {MergedMemberRow.RETURN}"
)

# The passage-entity graph of the current chunks, for graph walks over the whole store; merged entities count as
# the entity they resolved into. Dates are left out: "May 2025" ties notes by when, not by what they are about, and
# with them the walk and the bridge round found fewer second notes (notes_dev multi_hop R@5 78.3 against 83.8).
CURRENT_MENTION_EDGES = (
    f"MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE c.current AND e.label <> 'Date' RETURN c.id, {_CANONICAL}"
)
CURRENT_ABOUT_EDGES = f"MATCH (c:Chunk)-[:ABOUT]->(e:Entity) WHERE c.current RETURN c.id, {_CANONICAL}"
CANONICAL_NAMES = "MATCH (e:Entity) WHERE e.merged_into = '' RETURN e.norm_name, e.id"
MEMBER_NAMES = "MATCH (e:Entity) WHERE e.merged_into <> '' RETURN e.norm_name, e.merged_into"
# The same, for some names only (the names a query holds), and the current chunks that name one entity record.
NAMED_RECORDS = (
    f"MATCH (e:Entity) WHERE e.norm_name IN CAST($names AS STRING[]) RETURN DISTINCT e.norm_name, {_CANONICAL}"
)
_NAMING_RECORD = "MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) WHERE e.id = $id AND c.current"
COUNT_CHUNKS_NAMING = f"{_NAMING_RECORD} RETURN count(DISTINCT c.id)"
CHUNKS_NAMING = f"{_NAMING_RECORD} RETURN DISTINCT c.id"

# Current chunks only: a superseded version's text supports nothing in the current graph. An entity's support
# includes that of the entities merged into it.
SUPPORTING_CHUNKS = (
    "UNWIND $ids AS i MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) WHERE e.id = i AND c.current "
    f"RETURN {_CANONICAL}, c.id, m.count"
)
ABOUT_CHUNKS = (
    f"UNWIND $ids AS i MATCH (c:Chunk)-[:ABOUT]->(e:Entity) WHERE e.id = i AND c.current RETURN {_CANONICAL}, c.id"
)
# The same for one entity record `$id`, in the order they rank in, the first `$k`: a hub is named by thousands of
# chunks, and a caller that keeps a few of each entity need not read them all.
FIRST_SUPPORTING_CHUNKS = (
    "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) WHERE e.id = $id AND c.current "
    f"RETURN {_CANONICAL}, c.id, m.count ORDER BY m.count DESC, c.id LIMIT $k"
)
FIRST_ABOUT_CHUNKS = (
    "MATCH (c:Chunk)-[:ABOUT]->(e:Entity) WHERE e.id = $id AND c.current "
    f"RETURN {_CANONICAL}, c.id ORDER BY c.id LIMIT $k"
)

GET_RELATIONS_OF = (
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) "
    "WHERE a.id = $entity_id OR b.id = $entity_id OR a.merged_into = $entity_id OR b.merged_into = $entity_id "
    f"RETURN {RelationRow.returning(source_id=_A, target_id=_B)}"
)

# Filters by document: the resolved entities the documents' current chunks name or are about, and their communities.
ENTITIES_OF_DOCUMENTS = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) WHERE d.id IN $ids AND c.current "
    f"RETURN DISTINCT {_CANONICAL}"
)
# Every entity record (a member of a merge too) current chunks of the documents name or are about: (record, resolved id,
# normalized name).
ENTITY_RECORDS_OF_DOCUMENTS = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) WHERE d.id IN $ids AND c.current "
    f"RETURN DISTINCT e.id, {_CANONICAL}, e.norm_name"
)

# Graph walks: per hop, one statement per direction. `$ids` is the frontier (resolved ids) and the records merged into
# it, each looked up by primary key (a `WHERE a.id IN $ids` filter would scan every relation, a cost that grows with
# the corpus); `$seen` the relations already walked. Both ends count as the entity they resolved into, and a relation
# that merging turned into a loop is skipped. The best supported relations come first, so `$cap` keeps those; a walk
# in both directions keeps the best `$cap` of the two statements' rows (``KuzuWalks._hops``).


def _hop(start: str) -> str:
    return (
        f"UNWIND $ids AS i MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE {start}.id = i "
        "AND NOT x.id IN CAST($seen AS STRING[]) AND ($any_type OR x.type IN CAST($types AS STRING[])) "
        f"AND {_A} <> {_B} "
        f"RETURN {RelationRow.returning(source_id=_A, target_id=_B)} ORDER BY size(x.chunk_ids) DESC, x.id LIMIT $cap"
    )


TRAVERSE_HOP = {
    TraversalDirection.OUT: (_hop("a"),),
    TraversalDirection.IN: (_hop("b"),),
    TraversalDirection.BOTH: (_hop("a"), _hop("b")),
}


# The best supported `$k` relations of one entity record `$id`, in a hop statement's order and direction, without the
# hop's filters: what ``KuzuHopCache`` keeps per record, filtered in memory by each walk. Read in two statements: the
# ranking (each relation's offset in its table, best first), then the rows at those offsets. Kùzu reads every column a
# statement returns for every relation it scans before it sorts and cuts, and a hub's relations carry long chunk id
# lists: one statement took 72 to 89 ms a hub of 4,000 to 12,000 relations at 1,000,000 chunks, the two 12 + 18 ms.
def _best_offsets(start: str) -> str:
    return (
        f"MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE {start}.id = $id "
        "RETURN offset(ID(x)) AS o, size(x.chunk_ids) AS s, x.id AS i ORDER BY s DESC, i LIMIT $k"
    )


def _rows_at(start: str) -> str:
    return (
        f"MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE {start}.id = $id "
        "AND offset(ID(x)) IN CAST($offsets AS INT64[]) "
        f"RETURN {RelationRow.returning(source_id=_A, target_id=_B)}"
    )


BEST_OF_HOP = {_hop(end): (_best_offsets(end), _rows_at(end)) for end in ("a", "b")}
# The records merged into others, by the entity they resolved into (what a walk from a resolved id starts from too).
MERGED_INTO = "MATCH (e:Entity) WHERE e.merged_into <> '' RETURN e.merged_into, e.id"
CANONICAL_IDS = f"UNWIND $ids AS i MATCH (e:Entity) WHERE e.id = i RETURN e.id, {_CANONICAL}"
RELATION_TYPES_OF = (
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) "
    "WHERE (a.id = $entity_id OR a.merged_into = $entity_id OR b.id = $entity_id OR b.merged_into = $entity_id) "
    f"AND {_A} <> {_B} RETURN x.type, count(*)"
)
ENTITIES_BY_NORM_NAME = f"MATCH (e:Entity) WHERE e.norm_name = $norm_name RETURN DISTINCT {_CANONICAL}"

# ``RelationIndex`` (``relation_index_reads.py``): which direction each hop statement starts from, the graph read as
# columns (node and relation offsets, not ids: five million relations at 1,000,000 chunks), and relations' rows read
# from one end by their offsets (the read scans that end's relations: ``RelationIndex.read_plan`` picks the ends).
HOP_START = {_hop("a"): "a", _hop("b"): "b"}
INDEX_RECORDS = "MATCH (e:Entity) RETURN offset(ID(e)) AS o, e.id AS id, e.merged_into AS m"
INDEX_RELATIONS = (
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) "
    "RETURN offset(ID(a)) AS a, offset(ID(b)) AS b, offset(ID(x)) AS o, size(x.chunk_ids) AS s, x.type AS t, x.id AS i"
)
ROWS_AT = {end: f"{_rows_at(end)}, offset(ID(x))" for end in ("a", "b")}
