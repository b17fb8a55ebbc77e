"""Every Cypher statement agrag sends to Kùzu. Nothing else in the code base writes Cypher."""

import re

SCHEMA: tuple[str, ...] = (
    "CREATE NODE TABLE IF NOT EXISTS Document("
    "id STRING, version STRING, title STRING, source_path STRING, chunk_count INT64, PRIMARY KEY(id))",
    "CREATE NODE TABLE IF NOT EXISTS Chunk("
    "id STRING, document_id STRING, document_version STRING, title STRING, text STRING, heading_path STRING[], "
    "ord INT64, start_offset INT64, end_offset INT64, parent_id STRING, current BOOLEAN, PRIMARY KEY(id))",
    "CREATE NODE TABLE IF NOT EXISTS Entity("
    "id STRING, name STRING, norm_name STRING, label STRING, description STRING, PRIMARY KEY(id))",
    "CREATE NODE TABLE IF NOT EXISTS StoreInfo(key STRING, value STRING, PRIMARY KEY(key))",
    "CREATE REL TABLE IF NOT EXISTS HAS_CHUNK(FROM Document TO Chunk)",
    "CREATE REL TABLE IF NOT EXISTS NEXT(FROM Chunk TO Chunk)",
    "CREATE REL TABLE IF NOT EXISTS PARENT(FROM Chunk TO Chunk)",
    "CREATE REL TABLE IF NOT EXISTS MENTIONS(FROM Chunk TO Entity, count INT64)",
    "CREATE REL TABLE IF NOT EXISTS ABOUT(FROM Chunk TO Entity)",
    "CREATE REL TABLE IF NOT EXISTS RELATED("
    "FROM Entity TO Entity, id STRING, type STRING, description STRING, chunk_ids STRING[])",
    "CREATE NODE TABLE IF NOT EXISTS MergeLog("
    "id STRING, member_id STRING, resolved_id STRING, decision STRING, rule STRING, score DOUBLE, reason STRING, "
    "run_id STRING, undone BOOLEAN, PRIMARY KEY(id))",
    "CREATE NODE TABLE IF NOT EXISTS Candidate("
    "id STRING, entity_id STRING, other_id STRING, name STRING, other_name STRING, score DOUBLE, rule STRING, "
    "PRIMARY KEY(id))",
    "CREATE NODE TABLE IF NOT EXISTS Community("
    "id STRING, level INT64, parent_id STRING, size INT64, title STRING, summary STRING, rating DOUBLE, "
    "findings STRING, method STRING, PRIMARY KEY(id))",
    "CREATE REL TABLE IF NOT EXISTS IN_COMMUNITY(FROM Entity TO Community)",
    # Columns added after the first release: a data dir made before them gets them with their defaults.
    "ALTER TABLE Chunk ADD IF NOT EXISTS kind STRING DEFAULT 'text'",
    "ALTER TABLE Chunk ADD IF NOT EXISTS cells STRING DEFAULT ''",
    "ALTER TABLE Entity ADD IF NOT EXISTS merged_into STRING DEFAULT ''",
    "ALTER TABLE Document ADD IF NOT EXISTS config_hash STRING DEFAULT ''",
    # '' for a document stored before agrag recorded the folder it came from (its id was its relative path alone).
    "ALTER TABLE Document ADD IF NOT EXISTS source_folder STRING DEFAULT ''",
    # The plan (AppliedPlan JSON) the document was ingested with; '' for a document stored before plans were recorded.
    "ALTER TABLE Document ADD IF NOT EXISTS plan STRING DEFAULT ''",
)

_CREATES = re.compile(r"CREATE (?:NODE|REL) TABLE IF NOT EXISTS (\w+)")
_ADDS = re.compile(r"ALTER TABLE (\w+) ADD IF NOT EXISTS (\w+)")


def schema_object(statement: str) -> tuple[str, str | None] | None:
    """The table (and column, for an ``ALTER ... ADD``) a ``SCHEMA`` statement makes; None for another form."""
    if created := _CREATES.match(statement):
        return created.group(1), None
    if added := _ADDS.match(statement):
        return added.group(1), added.group(2)
    return None


NODE_TABLES = ("Document", "Chunk", "Entity", "MergeLog", "Candidate", "Community")
REL_TABLES = ("HAS_CHUNK", "NEXT", "PARENT", "MENTIONS", "ABOUT", "RELATED", "IN_COMMUNITY")

# An entity's resolved id: the entity it was merged into, else itself.
_CANONICAL = "CASE WHEN e.merged_into <> '' THEN e.merged_into ELSE e.id END"

GET_INFO = "MATCH (i:StoreInfo) RETURN i.key, i.value"

SET_INFO = "MERGE (i:StoreInfo {key: $key}) SET i.value = $value"

DOCUMENT_VERSIONS = "MATCH (d:Document) WHERE d.id IN $ids RETURN d.id, d.version"

UPSERT_DOCUMENTS = (
    "UNWIND $rows AS r MERGE (d:Document {id: r.id}) "
    "SET d.version = r.version, d.title = r.title, d.source_path = r.source_path, d.chunk_count = r.chunk_count, "
    "d.config_hash = r.config_hash, d.source_folder = r.source_folder, d.plan = r.plan"
)
DOCUMENT_ORIGINS = (
    "MATCH (d:Document) WHERE d.id IN $ids AND d.version <> '' "
    "RETURN d.id, d.version, d.title, d.source_path, d.chunk_count, d.source_folder"
)
SET_SOURCE_FOLDERS = "UNWIND $rows AS r MATCH (d:Document {id: r.id}) SET d.source_folder = r.source_folder"
DOCUMENT_CONFIG_HASHES = "MATCH (d:Document) WHERE d.id IN $ids RETURN d.id, d.config_hash"

# Starts from each document's primary key, so superseding costs the documents' chunks, not a scan of all chunks.
# Returns every older chunk, not only those it changes: a write killed after this statement must, when run again,
# still retire what those chunks supported.
SUPERSEDE_CHUNKS = (
    "UNWIND $rows AS r MATCH (d:Document {id: r.id})-[:HAS_CHUNK]->(c:Chunk) "
    "WHERE c.document_version <> r.version SET c.current = false RETURN c.id"
)

UPSERT_CHUNKS = (
    "UNWIND $rows AS r MERGE (c:Chunk {id: r.id}) "
    "SET c.document_id = r.document_id, c.document_version = r.document_version, c.title = r.title, "
    "c.text = r.text, c.heading_path = r.heading_path, c.ord = r.ord, c.start_offset = r.start_offset, "
    "c.end_offset = r.end_offset, c.parent_id = r.parent_id, c.kind = r.kind, c.cells = r.cells, c.current = true"
)

# A document node exists from here on, but has no version until it is committed.
LINK_DOCUMENT_CHUNKS = (
    "UNWIND $pairs AS p MERGE (d:Document {id: p.document_id}) WITH d, p "
    "MATCH (c:Chunk {id: p.chunk_id}) MERGE (d)-[:HAS_CHUNK]->(c)"
)

LINK_NEXT = "UNWIND $pairs AS p MATCH (a:Chunk {id: p.a}), (b:Chunk {id: p.b}) MERGE (a)-[:NEXT]->(b)"

LINK_PARENT = "UNWIND $pairs AS p MATCH (a:Chunk {id: p.a}), (b:Chunk {id: p.b}) MERGE (a)-[:PARENT]->(b)"

EXISTING_ENTITIES = "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id"

UPSERT_ENTITIES = (
    "UNWIND $rows AS r MERGE (e:Entity {id: r.id}) "
    "ON CREATE SET e.name = r.name, e.norm_name = r.norm_name, e.label = r.label, e.description = r.description"
)

UPSERT_MENTIONS = (
    "UNWIND $rows AS r MATCH (c:Chunk {id: r.chunk_id}), (e:Entity {id: r.entity_id}) "
    "MERGE (c)-[m:MENTIONS]->(e) SET m.count = r.count"
)

UPSERT_ABOUT = (
    "UNWIND $rows AS r MATCH (c:Chunk {id: r.chunk_id}), (e:Entity {id: r.entity_id}) MERGE (c)-[:ABOUT]->(e)"
)

# The passage-entity graph of the current chunks, for graph walks over the whole store; merged entities count as
# the entity they resolved into.
CURRENT_MENTION_EDGES = f"MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE c.current RETURN c.id, {_CANONICAL}"
CURRENT_ABOUT_EDGES = f"MATCH (c:Chunk)-[:ABOUT]->(e:Entity) WHERE c.current RETURN c.id, {_CANONICAL}"
CANONICAL_NAMES = "MATCH (e:Entity) WHERE e.merged_into = '' RETURN e.norm_name, e.id"
MEMBER_NAMES = "MATCH (e:Entity) WHERE e.merged_into <> '' RETURN e.norm_name, e.merged_into"

UPSERT_RELATIONS = (
    "UNWIND $rows AS r MATCH (a:Entity {id: r.source_id}), (b:Entity {id: r.target_id}) "
    "MERGE (a)-[x:RELATED {id: r.id}]->(b) "
    "ON CREATE SET x.type = r.type, x.description = r.description, x.chunk_ids = r.chunk_ids "
    "ON MATCH SET x.chunk_ids = list_sort(list_distinct(list_concat(x.chunk_ids, r.chunk_ids)))"
)

_CHUNK_COLUMNS = (
    "c.id, c.document_id, c.document_version, c.text, c.heading_path, c.ord, c.start_offset, c.end_offset, "
    "c.parent_id, c.title, c.kind, c.cells, c.current"
)
GET_CHUNKS = f"MATCH (c:Chunk) WHERE c.id IN $ids RETURN {_CHUNK_COLUMNS}"

GET_ENTITIES = "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id, e.name, e.label, e.description"


# Reads within a document scope, applied in the query: `$any_doc` true reads every document, else only those whose id
# is in `$docs` (both always bound; the cast types an empty list).
def _in_scope(document_id: str) -> str:
    return f"($any_doc OR {document_id} IN CAST($docs AS STRING[]))"


GET_CHUNKS_IN_SCOPE = f"MATCH (c:Chunk) WHERE c.id IN $ids AND {_in_scope('c.document_id')} RETURN {_CHUNK_COLUMNS}"

# The chunks next to chunk `$id` (`s`, itself in scope) in one document version: one statement per direction. A
# section chunk is the PARENT of the text chunks cut from it; NEXT is reading order.
_NEIGHBOUR_SCOPE = (
    f"{_in_scope('s.document_id')} AND {_in_scope('c.document_id')} "
    "AND c.document_id = s.document_id AND c.document_version = s.document_version"
)
CHUNK_NEIGHBOURS = {
    "parent": f"MATCH (s:Chunk {{id: $id}})-[:PARENT]->(c:Chunk) WHERE {_NEIGHBOUR_SCOPE} RETURN {_CHUNK_COLUMNS}",
    "children": (
        f"MATCH (c:Chunk)-[:PARENT]->(s:Chunk {{id: $id}}) WHERE {_NEIGHBOUR_SCOPE} "
        f"RETURN {_CHUNK_COLUMNS} ORDER BY c.ord, c.id"
    ),
    "siblings": (
        "MATCH (s:Chunk {id: $id})-[:PARENT]->(p:Chunk)<-[:PARENT]-(c:Chunk) "
        f"WHERE c.id <> s.id AND {_NEIGHBOUR_SCOPE} RETURN {_CHUNK_COLUMNS} ORDER BY c.ord, c.id"
    ),
    "previous": (
        f"MATCH (c:Chunk)-[:NEXT]->(s:Chunk {{id: $id}}) WHERE {_NEIGHBOUR_SCOPE} "
        f"RETURN {_CHUNK_COLUMNS} ORDER BY c.ord, c.id"
    ),
    "next": (
        f"MATCH (s:Chunk {{id: $id}})-[:NEXT]->(c:Chunk) WHERE {_NEIGHBOUR_SCOPE} "
        f"RETURN {_CHUNK_COLUMNS} ORDER BY c.ord, c.id"
    ),
}

# The chunks of one document version whose [start_offset, end_offset) overlaps [$span_start, $span_end), from the
# document's primary key, so the cost is the document's chunks.
VERSION_CHUNKS_OVERLAPPING = (
    "MATCH (d:Document {id: $document_id})-[:HAS_CHUNK]->(c:Chunk) "
    "WHERE c.document_version = $version AND c.start_offset < $span_end AND c.end_offset > $span_start "
    f"AND {_in_scope('d.id')} RETURN {_CHUNK_COLUMNS} ORDER BY c.start_offset, c.ord, c.id"
)

DOCUMENT_VERSION_INFO = f"MATCH (d:Document) WHERE d.id IN $ids AND {_in_scope('d.id')} RETURN d.id, d.version, d.title"

# Current chunks only: a superseded version's text supports nothing in the current graph. An entity's support
# includes that of the entities merged into it.
SUPPORTING_CHUNKS = (
    "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) WHERE (e.id IN $ids OR e.merged_into IN $ids) AND c.current "
    f"RETURN {_CANONICAL}, c.id, m.count"
)
ABOUT_CHUNKS = (
    "MATCH (c:Chunk)-[:ABOUT]->(e:Entity) WHERE (e.id IN $ids OR e.merged_into IN $ids) AND c.current "
    f"RETURN {_CANONICAL}, c.id"
)

GET_RELATIONS_OF = (
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) "
    "WHERE a.id = $entity_id OR b.id = $entity_id OR a.merged_into = $entity_id OR b.merged_into = $entity_id "
    "RETURN x.id, x.type, x.description, x.chunk_ids, "
    "CASE WHEN a.merged_into <> '' THEN a.merged_into ELSE a.id END, "
    "CASE WHEN b.merged_into <> '' THEN b.merged_into ELSE b.id END"
)

# Resolution: the stored entities new ones may resolve into, merges as pointers, the log, and near misses.
CANONICAL_ENTITIES = "MATCH (e:Entity) WHERE e.merged_into = '' RETURN e.id, e.name, e.label, e.description"
SET_MERGED_INTO = "UNWIND $rows AS r MATCH (e:Entity {id: r.member_id}) SET e.merged_into = r.resolved_id"
# Entities merged into a member that is now merged itself follow it to the final entity.
FOLLOW_MERGES = "UNWIND $rows AS r MATCH (e:Entity) WHERE e.merged_into = r.member_id SET e.merged_into = r.resolved_id"
UPSERT_MERGE_LOG = (
    "UNWIND $rows AS r MERGE (m:MergeLog {id: r.id}) SET m.member_id = r.member_id, m.resolved_id = r.resolved_id, "
    "m.decision = r.decision, m.rule = r.rule, m.score = r.score, m.reason = r.reason, m.run_id = r.run_id, "
    "m.undone = false"
)
GET_MERGE_LOG = (
    "MATCH (m:MergeLog) OPTIONAL MATCH (a:Entity {id: m.member_id}) OPTIONAL MATCH (b:Entity {id: m.resolved_id}) "
    "RETURN m.id, m.member_id, m.resolved_id, m.decision, m.rule, m.score, m.reason, m.undone, a.name, b.name "
    "ORDER BY m.run_id, m.id"
)
ACTIVE_MERGES_OF = (
    "MATCH (m:MergeLog) WHERE (m.member_id = $id OR m.id = $id) AND m.decision = 'merged' AND NOT m.undone "
    "RETURN m.id, m.member_id, m.resolved_id"
)
UNDO_MERGE = (
    "MATCH (m:MergeLog {id: $log_id}) SET m.undone = true WITH m "
    "MATCH (e:Entity {id: m.member_id}) SET e.merged_into = ''"
)
UPSERT_CANDIDATES = (
    "UNWIND $rows AS r MERGE (x:Candidate {id: r.id}) SET x.entity_id = r.entity_id, x.other_id = r.other_id, "
    "x.name = r.name, x.other_name = r.other_name, x.score = r.score, x.rule = r.rule"
)
GET_CANDIDATES = (
    "MATCH (x:Candidate) RETURN x.entity_id, x.other_id, x.name, x.other_name, x.score, x.rule "
    "ORDER BY x.score DESC, x.id"
)
DELETE_CANDIDATES_OF = "MATCH (x:Candidate) WHERE x.entity_id IN $ids OR x.other_id IN $ids DELETE x"

# Communities: the weighted graph of resolved entities, then the hierarchy, replaced as a whole.
ENTITY_GRAPH_EDGES = (
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) "
    "RETURN CASE WHEN a.merged_into <> '' THEN a.merged_into ELSE a.id END, "
    "CASE WHEN b.merged_into <> '' THEN b.merged_into ELSE b.id END, size(x.chunk_ids)"
)
DELETE_COMMUNITIES = "MATCH (k:Community) DETACH DELETE k"
UPSERT_COMMUNITIES = (
    "UNWIND $rows AS r CREATE (k:Community {id: r.id, level: r.level, parent_id: r.parent_id, size: r.size, "
    "title: r.title, summary: r.summary, rating: r.rating, findings: r.findings, method: r.method})"
)
LINK_COMMUNITY_MEMBERS = (
    "UNWIND $pairs AS p MATCH (e:Entity {id: p.entity_id}), (k:Community {id: p.community_id}) "
    "CREATE (e)-[:IN_COMMUNITY]->(k)"
)
GET_COMMUNITIES = (
    "MATCH (k:Community) OPTIONAL MATCH (e:Entity)-[:IN_COMMUNITY]->(k) "
    "RETURN k.id, k.level, k.parent_id, k.title, k.summary, k.rating, k.findings, k.method, collect(e.id) "
    "ORDER BY k.level, k.id"
)
# Mentions of the current chunks for a set of resolved entities: what a community report is written from.
MENTIONS_OF = (
    "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE (e.id IN $ids OR e.merged_into IN $ids) AND c.current "
    f"RETURN c.id, {_CANONICAL}"
)
RELATIONS_AMONG = (
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE (a.id IN $ids OR a.merged_into IN $ids) "
    "AND (b.id IN $ids OR b.merged_into IN $ids) "
    "RETURN x.id, x.type, x.description, x.chunk_ids, "
    "CASE WHEN a.merged_into <> '' THEN a.merged_into ELSE a.id END, "
    "CASE WHEN b.merged_into <> '' THEN b.merged_into ELSE b.id END"
)


def count_nodes(table: str) -> str:
    """Count the rows of a node table (``table`` comes from ``NODE_TABLES``, never from a user)."""
    return f"MATCH (n:{table}) RETURN count(n)"


def count_rels(table: str) -> str:
    """Count the rows of a relationship table (``table`` comes from ``REL_TABLES``, never from a user)."""
    return f"MATCH ()-[r:{table}]->() RETURN count(r)"


# Retiring the chunks of a superseded or deleted version: what only they supported leaves the current graph.
RELATIONS_NEAR_CHUNKS = (
    "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE c.id IN $ids WITH DISTINCT e "
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE a.id = e.id OR b.id = e.id "
    "RETURN DISTINCT x.id, a.id, b.id, x.chunk_ids"
)
SET_RELATION_SUPPORT = (
    "UNWIND $rows AS r MATCH (a:Entity {id: r.a})-[x:RELATED]->(b:Entity {id: r.b}) WHERE x.id = r.id "
    "SET x.chunk_ids = r.chunk_ids"
)
DELETE_RELATIONS = (
    "UNWIND $rows AS r MATCH (a:Entity {id: r.a})-[x:RELATED]->(b:Entity {id: r.b}) WHERE x.id = r.id DELETE x"
)
ENTITIES_OF_CHUNKS = "MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) WHERE c.id IN $ids RETURN DISTINCT e.id"
# An entity keeps its place while a current chunk names it, or names an entity merged into it: raw ids, so a merged
# member still named is not taken for an orphan, and a resolved entity its members still need is kept.
STILL_NAMED = (
    "MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) WHERE c.current AND (e.id IN $ids OR e.merged_into IN $ids) "
    "RETURN DISTINCT e.id, e.merged_into"
)
DELETE_ENTITIES = "MATCH (e:Entity) WHERE e.id IN $ids DETACH DELETE e"
# Every chunk of the document, current or not, so a delete killed half-way completes when run again.
CHUNKS_OF_DELETED_DOCUMENT = "MATCH (d:Document {id: $id})-[:HAS_CHUNK]->(c:Chunk) SET c.current = false RETURN c.id"
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
COMMUNITIES_OF_ENTITIES = "MATCH (e:Entity)-[:IN_COMMUNITY]->(k:Community) WHERE e.id IN $ids RETURN DISTINCT k.id"
CHUNK_IDS_OF_DOCUMENT = (
    "MATCH (d:Document {id: $id})-[:HAS_CHUNK]->(c:Chunk) RETURN c.id, c.document_version, c.ord ORDER BY c.ord"
)
MARK_DOCUMENT_DELETED = "MATCH (d:Document {id: $id}) SET d.version = '', d.chunk_count = 0 RETURN d.id"
# Re-extraction in place: the chunks stay (ids and text), their links to entities and their relation support go, then
# the new extraction is linked to the same chunks.
DELETE_CHUNK_MENTIONS = "MATCH (c:Chunk)-[m:MENTIONS]->(:Entity) WHERE c.id IN $ids DELETE m"
DELETE_CHUNK_ABOUT = "MATCH (c:Chunk)-[x:ABOUT]->(:Entity) WHERE c.id IN $ids DELETE x"
SET_DOCUMENT_PLANS = "UNWIND $rows AS r MATCH (d:Document {id: r.id}) SET d.plan = r.plan"
SET_CONFIG_HASHES = "UNWIND $rows AS r MATCH (d:Document {id: r.id}) SET d.config_hash = r.config_hash"

# Graph walks: one statement per hop and direction. `$ids` is the frontier (resolved ids), `$seen` the relations
# already walked; both ends count as the entity they resolved into, and a relation that merging turned into a loop
# is skipped. The best supported relations come first, so `$cap` keeps those.
_A = "CASE WHEN a.merged_into <> '' THEN a.merged_into ELSE a.id END"
_B = "CASE WHEN b.merged_into <> '' THEN b.merged_into ELSE b.id END"
_A_IN_FRONTIER = "(a.id IN $ids OR a.merged_into IN $ids)"
_B_IN_FRONTIER = "(b.id IN $ids OR b.merged_into IN $ids)"


def _hop(frontier: str) -> str:
    return (
        f"MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE {frontier} "
        "AND NOT x.id IN CAST($seen AS STRING[]) AND ($any_type OR x.type IN CAST($types AS STRING[])) "
        f"AND {_A} <> {_B} "
        f"RETURN x.id, x.type, x.description, x.chunk_ids, {_A}, {_B} ORDER BY size(x.chunk_ids) DESC, x.id LIMIT $cap"
    )


TRAVERSE_HOP = {
    "out": _hop(_A_IN_FRONTIER),
    "in": _hop(_B_IN_FRONTIER),
    "both": _hop(f"({_A_IN_FRONTIER} OR {_B_IN_FRONTIER})"),
}
CANONICAL_IDS = f"MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id, {_CANONICAL}"


# Evidence reads within a document scope. A resolved entity is visible in a scope when a current chunk of an
# in-scope document mentions it or is about it, or about or mentioning an entity merged into it. Two subqueries
# joined on equality, not one with `vm.id = X OR vm.merged_into = X`: Kùzu hashes an equality join but compares every
# pair of rows for an OR (or for an equality on a CASE), which takes minutes on a large graph.
def _visible(entity_id: str) -> str:
    chunks = f"MATCH (vc:Chunk)-[:MENTIONS|:ABOUT]->(vm:Entity) WHERE vc.current AND {_in_scope('vc.document_id')}"
    return f"(EXISTS {{ {chunks} AND vm.id = {entity_id} }} OR EXISTS {{ {chunks} AND vm.merged_into = {entity_id} }})"


_S = "CASE WHEN s.merged_into <> '' THEN s.merged_into ELSE s.id END"
# One row per asked id (`asked`) whose resolved entity is visible.
VISIBLE_ENTITIES = (
    f"MATCH (s:Entity) WHERE s.id IN $ids WITH s.id AS asked, {_S} AS rid "
    f"MATCH (e:Entity {{id: rid}}) WHERE {_visible('e.id')} "
    "RETURN asked, e.id, e.name, e.label, e.description"
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
    f"RETURN {_CANONICAL} AS rid, e.id, e.name, e.label, e.description, count(*) AS links"
)
# Every record current in-scope chunks name or are about (as RECORDS_IN_SCOPE, for the whole scope).
ALL_RECORDS_IN_SCOPE = (
    f"MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) WHERE c.current AND {_in_scope('c.document_id')} "
    f"RETURN {_CANONICAL} AS rid, e.id, e.name, e.label, e.description, count(*) AS links"
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
        "RETURN x.id, x.type, x.description, x.chunk_ids, a_id, b_id, shown "
        "ORDER BY size(shown) DESC, size(x.chunk_ids) DESC, x.id LIMIT $cap"
    )


SCOPED_HOP = {"scoped": _scoped_hop(visible=True), "all": _scoped_hop(visible=False)}
RELATION_TYPES_OF = (
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) "
    "WHERE (a.id = $entity_id OR a.merged_into = $entity_id OR b.id = $entity_id OR b.merged_into = $entity_id) "
    f"AND {_A} <> {_B} RETURN x.type, count(*)"
)
ENTITIES_BY_NORM_NAME = f"MATCH (e:Entity) WHERE e.norm_name = $norm_name RETURN DISTINCT {_CANONICAL}"

# Queries a model or a user wrote run in a read-only transaction, after a check of their words: no writes, one
# statement, and only the catalog procedures below.
BEGIN_READ_ONLY = "BEGIN TRANSACTION READ ONLY"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"
WRITE_KEYWORDS = frozenset(
    {
        "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "ALTER", "COPY", "INSTALL", "UNINSTALL",
        "LOAD", "ATTACH", "USE", "BEGIN", "COMMIT", "ROLLBACK", "CHECKPOINT", "EXPORT", "IMPORT", "FOREACH",
        "TRUNCATE", "RENAME",
    }
)  # fmt: skip
READ_ONLY_PROCEDURES = frozenset({"show_tables", "table_info", "show_connection", "db_version"})

# The catalog, described for a prompt. Table names in `table_info` come from `show_tables`, never from a user.
SHOW_TABLES = "CALL show_tables() RETURN *"
INTERNAL_TABLES = frozenset({"StoreInfo", "MergeLog", "Candidate"})
RELATION_TYPE_COUNTS = "MATCH ()-[x:RELATED]->() RETURN x.type, count(*) AS n ORDER BY n DESC, x.type LIMIT 30"
ENTITY_LABEL_COUNTS = (
    "MATCH (e:Entity) WHERE e.merged_into = '' RETURN e.label, count(*) AS n ORDER BY n DESC, e.label LIMIT 30"
)
SCHEMA_NOTES = (
    "Notes on this graph (Kùzu Cypher):\n"
    "- Relations between entities are all in the RELATED table; their kind is the property RELATED.type, e.g. "
    "MATCH (a:Entity)-[r:RELATED]->(b:Entity) WHERE r.type = 'WORKS_AT'.\n"
    "- An entity with a non-empty merged_into was merged into the entity with that id: count or list entities with "
    "WHERE e.merged_into = '' to see each resolved entity once.\n"
    "- Chunks are passages of documents; only chunks with current = true belong to the current version.\n"
    "- Chunk-[MENTIONS]->Entity links a passage to the entities it names; Document-[HAS_CHUNK]->Chunk to its "
    "passages; Entity-[IN_COMMUNITY]->Community to topic clusters.\n"
    "- String matching: use lower(e.name) CONTAINS 'word' for loose matches.\n"
    "- Return plain values (properties, counts), not whole nodes; use LIMIT."
)


def table_info(table: str) -> str:
    """The columns of a table (``table`` comes from ``show_tables``, never from a user)."""
    return f"CALL table_info('{table}') RETURN *"


def show_connection(table: str) -> str:
    """The node tables a relationship table joins (``table`` comes from ``show_tables``)."""
    return f"CALL show_connection('{table}') RETURN *"


# Literals, quoted names and comments: their words are data, not clauses.
_NOT_CLAUSES = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.DOTALL)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL = re.compile(r"\bCALL\b\s*([A-Za-z_][A-Za-z0-9_]*)?", re.IGNORECASE)


def clause_text(query: str) -> str:
    """``query`` without its string literals, quoted names and comments: the words Kùzu reads as clauses."""
    return _NOT_CLAUSES.sub(" ", query)


def read_only_problem(query: str) -> str | None:
    """Say why ``query`` is not one read-only statement, or return None if it looks like one.

    A check of the words, before the read-only transaction that Kùzu enforces: no write or transaction clause, one
    statement, and ``CALL`` only of the catalog procedures in ``READ_ONLY_PROCEDURES``.
    """
    clauses = clause_text(query).strip().rstrip(";").strip()
    if not clauses:
        return "the query is empty"
    if ";" in clauses:
        return "it holds more than one statement; send exactly one"
    writes = sorted({w.upper() for w in _WORD.findall(clauses)} & WRITE_KEYWORDS)
    if writes:
        return f"it uses {', '.join(writes)}"
    for call in _CALL.finditer(clauses):
        name = (call.group(1) or "").lower()
        if name not in READ_ONLY_PROCEDURES:
            allowed = ", ".join(sorted(READ_ONLY_PROCEDURES))
            return f"it calls {name or 'a subquery'!r}; only these procedures may be called: {allowed}"
    return None


# Work Kùzu cannot bound (measured on 0.11.3): a list is allocated outside the buffer pool, and an expression of
# constants is evaluated while the query is planned, before its timeout runs; `UNWIND range(1,100000000)` grew the
# process past 22 GB. So `range` takes integer literals spanning at most MAX_RANGE_VALUES values, and a query may
# concatenate at most MAX_CONCATENATIONS times (`l + l` repeated doubles a list each time).
MAX_RANGE_VALUES = 100_000
MAX_CONCATENATIONS = 8
_RANGE = re.compile(r"\brange\s*\(", re.IGNORECASE)
_INTEGER = re.compile(r"\s*[-+]?\d+\s*")
_CONCATENATION = re.compile(r"\+|\b(?:list_concat|list_cat|array_concat|array_cat)\s*\(", re.IGNORECASE)
_QUOTED = re.compile(r"`([^`]*)`|'((?:\\.|[^'\\])*)'")
# A label or relationship type: after `:` or `|` in a pattern (a map key's value may match too; that only refuses more).
_LABEL = re.compile(r"[:|]\s*([A-Za-z_]\w*)")
_LABELLED = re.compile(r"([A-Za-z_]\w*)\s*:\s*[A-Za-z_`]")
_LAST_WORD = re.compile(r"([A-Za-z_]\w*)$")
_BEFORE_PATTERN = frozenset({"MATCH", "WHERE", "AND", "OR", "XOR", "NOT", "RETURN", "WITH", "DISTINCT", "IN", "WHEN"})
_NODE = re.compile(r"\(\s*([A-Za-z_]\w*)?\s*(?:\{[^{}]*\})?\s*\)")


def _arguments(text: str, start: int) -> str:
    """The text from ``start`` (just after an opening parenthesis) to its closing one, nested parentheses kept."""
    depth = 1
    for end in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            return text[start:end]
    return text[start:]


def _range_problem(arguments: str) -> str | None:
    values = arguments.split(",")
    if not 2 <= len(values) <= 3 or not all(_INTEGER.fullmatch(v) for v in values):
        return f"range({arguments.strip()}) does not have integer literal bounds"
    start, end, step = int(values[0]), int(values[1]), int(values[2]) if len(values) == 3 else 1
    if step == 0 or (end - start) // step + 1 > MAX_RANGE_VALUES:
        return f"range({arguments.strip()}) spans more than {MAX_RANGE_VALUES:,} values"
    return None


def unbounded_problem(query: str) -> str | None:
    """Say why ``query`` could do work Kùzu cannot interrupt or bound in memory, or return None.

    ``range`` must have integer literal bounds spanning at most ``MAX_RANGE_VALUES`` values, and the query may hold
    at most ``MAX_CONCATENATIONS`` ``+`` operators and list concatenations.
    """
    clauses = clause_text(query)
    for call in _RANGE.finditer(clauses):
        if problem := _range_problem(_arguments(clauses, call.end())):
            return f"{problem}; write range(a, b) with whole numbers at most {MAX_RANGE_VALUES:,} apart"
    if (uses := len(_CONCATENATION.findall(clauses))) > MAX_CONCATENATIONS:
        return f"it concatenates or adds {uses} times; at most {MAX_CONCATENATIONS} are allowed"
    return None


def internal_table_problem(query: str) -> str | None:
    """Say how ``query`` would read a table outside the public schema (``INTERNAL_TABLES``), or return None.

    Kùzu's table names are case-insensitive, so a name is refused in any case, quoted with backticks or given to a
    catalog procedure; and a node pattern needs a label (or a relationship) unless its variable has one elsewhere,
    since ``MATCH (n)`` matches every node table.
    """
    clauses = clause_text(query)
    internal = {name.lower(): name for name in INTERNAL_TABLES}
    names = {m.lower() for m in _LABEL.findall(clauses)}
    call = _CALL.search(clauses) is not None  # a catalog procedure takes the table's name as a string
    names |= {
        (q.group(1) if q.group(1) is not None else q.group(2) if call else "").strip().lower()
        for q in _QUOTED.finditer(query)
    }
    if named := sorted(internal[w] for w in names & internal.keys()):
        return f"it names the internal table {', '.join(named)}; only the tables of the schema may be read"
    labelled = {m.lower() for m in _LABELLED.findall(clauses)}
    for node in _NODE.finditer(clauses):
        before, after = clauses[: node.start()].rstrip(), clauses[node.end() :].lstrip()
        attached = (before[-1:] in ("-", ">")) or after[:1] in ("-", "<")
        word = _LAST_WORD.search(before)
        called = word is not None and word.group(1).upper() not in _BEFORE_PATTERN  # a function call
        if not (attached or called or (node.group(1) or "").lower() in labelled):
            return f"the node pattern {node.group(0)} has no label; give it one, e.g. (n:Entity)"
    return None


# The status of a data dir, overall or within a document scope (`$any_doc`, `$docs` as in `_in_scope`). Within a
# scope an entity counts when a current in-scope chunk names it or is about it (or one of its members), and a
# relation when every chunk id it was extracted from names an in-scope document (the document id is the part of a
# chunk id before its first dot), as `_scoped_hop` decides what may be crossed.
_CHUNK_DOCUMENT = "split_part(cid, '.', 1)"
STATUS_DOCUMENTS = f"MATCH (d:Document) WHERE d.version <> '' AND {_in_scope('d.id')} RETURN count(d)"
STATUS_CHUNKS = f"MATCH (c:Chunk) WHERE c.current AND {_in_scope('c.document_id')} RETURN count(c)"

# What the vector collections must hold at least: a committed document version's searchable chunks and the entities
# they name or are about were embedded before the commit; every community has a report vector.
EMBEDDED_CHUNKS = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE d.version <> '' AND c.document_version = d.version "
    "AND c.kind <> 'section' RETURN count(c)"
)
EMBEDDED_ENTITIES = (
    "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) "
    "WHERE d.version <> '' AND c.document_version = d.version RETURN count(DISTINCT e)"
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
ALL_ENTITIES = "MATCH (e:Entity) RETURN e.id, e.name, e.label, e.description, e.merged_into <> '' ORDER BY e.id"
STATUS_ENTITY_LABELS = "MATCH (e:Entity) WHERE e.merged_into = '' RETURN e.label, count(*)"
# Kùzu 0.11 cannot read a $parameter inside a list quantifier (an internal assertion fails), so the scope is bound
# to variables first.
STATUS_RELATION_TYPES = (
    "WITH $any_doc AS any_doc, CAST($docs AS STRING[]) AS docs "
    f"MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE {_A} <> {_B} "
    f"AND (any_doc OR (size(x.chunk_ids) > 0 AND all(cid IN x.chunk_ids WHERE {_CHUNK_DOCUMENT} IN docs))) "
    "RETURN x.type, count(*)"
)

# The committed documents (a document gets its version when its batch commits), in source path order.
LIST_DOCUMENTS = (
    f"MATCH (d:Document) WHERE d.version <> '' AND {_in_scope('d.id')} "
    "RETURN d.id, d.version, d.title, d.source_path, d.chunk_count, d.source_folder, d.plan "
    "ORDER BY d.source_path, d.id SKIP $skip LIMIT $limit"
)
