"""Cypher of ingest writes: chunks and their links, committed documents, entities, mentions, relations, retirement."""

# Each `$rows` entry is the table's row as `rows.py` builds it (`ChunkRow.params(chunk)`, `merge_log_params(...)`, ...).

# The commit of document versions, in one statement (Kùzu commits each statement whole, and a kill keeps all of it or
# none): each document gets its version, and its chunks' currency follows, the new version's current, older versions'
# superseded, and chunks of a version never committed (current NULL) stay uncommitted. Starts from each document's
# primary key, so the flip costs the documents' chunks, not a scan of all chunks.
COMMIT_DOCUMENTS = (
    "UNWIND $rows AS r MERGE (d:Document {id: r.id}) "
    "SET d.version = r.version, d.title = r.title, d.source_path = r.source_path, d.chunk_count = r.chunk_count, "
    "d.config_hash = r.config_hash, d.source_folder = r.source_folder, d.plan = r.plan "
    "WITH d, r MATCH (d)-[:HAS_CHUNK]->(c:Chunk) "
    "SET c.current = CASE WHEN c.document_version = r.version THEN true WHEN c.current IS NULL THEN NULL ELSE false END"
)

# Every older chunk of the documents (what the commit will supersede), for the retirement written before the commit.
OLDER_CHUNKS = (
    "UNWIND $rows AS r MATCH (d:Document {id: r.id})-[:HAS_CHUNK]->(c:Chunk) "
    "WHERE c.document_version <> r.version RETURN c.id"
)

# A new chunk is not committed (current NULL: no read sees it) until ``COMMIT_DOCUMENTS`` flips it; a stored one keeps
# its currency (written again by a resumed or repeated run, it is the same text).
UPSERT_CHUNKS = (
    "UNWIND $rows AS r MERGE (c:Chunk {id: r.id}) "
    "SET c.document_id = r.document_id, c.document_version = r.document_version, c.title = r.title, "
    "c.text = r.text, c.heading_path = r.heading_path, c.ord = r.ord, c.start_offset = r.start_offset, "
    "c.end_offset = r.end_offset, c.parent_id = r.parent_id, c.kind = r.kind, c.cells = r.cells"
)

# A document node exists from here on, but has no version until it is committed.
LINK_DOCUMENT_CHUNKS = (
    "UNWIND $pairs AS p MERGE (d:Document {id: p.document_id}) WITH d, p "
    "MATCH (c:Chunk {id: p.chunk_id}) MERGE (d)-[:HAS_CHUNK]->(c)"
)

LINK_NEXT = "UNWIND $pairs AS p MATCH (a:Chunk {id: p.a}), (b:Chunk {id: p.b}) MERGE (a)-[:NEXT]->(b)"

LINK_PARENT = "UNWIND $pairs AS p MATCH (a:Chunk {id: p.a}), (b:Chunk {id: p.b}) MERGE (a)-[:PARENT]->(b)"


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

UPSERT_RELATIONS = (
    "UNWIND $rows AS r MATCH (a:Entity {id: r.source_id}), (b:Entity {id: r.target_id}) "
    "MERGE (a)-[x:RELATED {id: r.id}]->(b) "
    "ON CREATE SET x.type = r.type, x.description = r.description, x.chunk_ids = r.chunk_ids "
    "ON MATCH SET x.chunk_ids = list_sort(list_distinct(list_concat(x.chunk_ids, r.chunk_ids)))"
)

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
# An entity keeps its place while a chunk current after the commit being written names it, or names an entity merged
# into it: raw ids, so a merged member still named is not taken for an orphan, and a resolved entity its members still
# need is kept. Written before the commit: the chunks it retires (`$gone`) are current still, and its own (`$incoming`)
# not yet.
STILL_NAMED = (
    "MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) "
    "WHERE ((c.current AND NOT c.id IN $gone) OR c.id IN $incoming) AND (e.id IN $ids OR e.merged_into IN $ids) "
    "RETURN DISTINCT e.id, e.merged_into"
)
DELETE_ENTITIES = "MATCH (e:Entity) WHERE e.id IN $ids DETACH DELETE e"
# Re-extraction in place: the chunks stay (ids and text), their links to entities and their relation support go, then
# the new extraction is linked to the same chunks.
DELETE_CHUNK_MENTIONS = "MATCH (c:Chunk)-[m:MENTIONS]->(:Entity) WHERE c.id IN $ids DELETE m"
DELETE_CHUNK_ABOUT = "MATCH (c:Chunk)-[x:ABOUT]->(:Entity) WHERE c.id IN $ids DELETE x"

# Whether a node table holds a row (``{table}`` is one of the schema's node tables).
ANY_NODE = "MATCH (n:{table}) RETURN 1 LIMIT 1"

# Looked up by primary key (`UNWIND`): `e.id IN $ids` would scan every entity on each call.
STORED_ENTITIES = "UNWIND $ids AS i MATCH (e:Entity) WHERE e.id = i RETURN DISTINCT e.id"

# One statement a row, each end looked up by primary key, for graphs too large for the `UNWIND` forms above (see
# `KuzuConnection._upsert_each`): a `FIND_*` walks from the bound ends (and updates), a `CREATE_*` adds the link where
# the walk found none, so the pair does what the `MERGE` does.
NODE_ROWS = "MATCH (n:{table}) RETURN count(*)"
MERGE_DOCUMENT_IDS = "UNWIND $ids AS i MERGE (d:Document {id: i})"
FIND_HAS_CHUNK = "MATCH (d:Document {id: $document_id})-[:HAS_CHUNK]->(c:Chunk {id: $chunk_id}) RETURN c.id"
CREATE_HAS_CHUNK = "MATCH (d:Document {id: $document_id}), (c:Chunk {id: $chunk_id}) CREATE (d)-[:HAS_CHUNK]->(c)"
FIND_NEXT = "MATCH (a:Chunk {id: $a})-[:NEXT]->(b:Chunk {id: $b}) RETURN a.id"
CREATE_NEXT = "MATCH (a:Chunk {id: $a}), (b:Chunk {id: $b}) CREATE (a)-[:NEXT]->(b)"
FIND_PARENT = "MATCH (a:Chunk {id: $a})-[:PARENT]->(b:Chunk {id: $b}) RETURN a.id"
CREATE_PARENT = "MATCH (a:Chunk {id: $a}), (b:Chunk {id: $b}) CREATE (a)-[:PARENT]->(b)"
FIND_MENTION = (
    "MATCH (c:Chunk {id: $chunk_id})-[m:MENTIONS]->(e:Entity {id: $entity_id}) SET m.count = $count RETURN c.id"
)
CREATE_MENTION = (
    "MATCH (c:Chunk {id: $chunk_id}), (e:Entity {id: $entity_id}) CREATE (c)-[:MENTIONS {count: $count}]->(e)"
)
FIND_ABOUT = "MATCH (c:Chunk {id: $chunk_id})-[:ABOUT]->(e:Entity {id: $entity_id}) RETURN c.id"
CREATE_ABOUT = "MATCH (c:Chunk {id: $chunk_id}), (e:Entity {id: $entity_id}) CREATE (c)-[:ABOUT]->(e)"
FIND_RELATION = (
    "MATCH (a:Entity {id: $source_id})-[x:RELATED]->(b:Entity {id: $target_id}) WHERE x.id = $id "
    "SET x.chunk_ids = list_sort(list_distinct(list_concat(x.chunk_ids, $chunk_ids))) RETURN x.id"
)
CREATE_RELATION = (
    "MATCH (a:Entity {id: $source_id}), (b:Entity {id: $target_id}) "
    "CREATE (a)-[:RELATED {id: $id, type: $type, description: $description, chunk_ids: $chunk_ids}]->(b)"
)
SET_RELATION_SUPPORT_ROW = (
    "MATCH (a:Entity {id: $a})-[x:RELATED]->(b:Entity {id: $b}) WHERE x.id = $id SET x.chunk_ids = $chunk_ids "
    "RETURN x.id"
)
DELETE_RELATION_ROW = "MATCH (a:Entity {id: $a})-[x:RELATED]->(b:Entity {id: $b}) WHERE x.id = $id DELETE x"
