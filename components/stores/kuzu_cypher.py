"""Every Cypher statement agrag sends to Kùzu. Nothing else in the code base writes Cypher."""

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
)

NODE_TABLES = ("Document", "Chunk", "Entity")
REL_TABLES = ("HAS_CHUNK", "NEXT", "PARENT", "MENTIONS", "ABOUT", "RELATED")

GET_INFO = "MATCH (i:StoreInfo) RETURN i.key, i.value"

SET_INFO = "MERGE (i:StoreInfo {key: $key}) SET i.value = $value"

DOCUMENT_VERSIONS = "MATCH (d:Document) WHERE d.id IN $ids RETURN d.id, d.version"

UPSERT_DOCUMENTS = (
    "UNWIND $rows AS r MERGE (d:Document {id: r.id}) "
    "SET d.version = r.version, d.title = r.title, d.source_path = r.source_path, d.chunk_count = r.chunk_count"
)

# Starts from each document's primary key, so superseding costs the documents' chunks, not a scan of all chunks.
SUPERSEDE_CHUNKS = (
    "UNWIND $rows AS r MATCH (d:Document {id: r.id})-[:HAS_CHUNK]->(c:Chunk) "
    "WHERE c.document_version <> r.version AND c.current SET c.current = false RETURN c.id"
)

UPSERT_CHUNKS = (
    "UNWIND $rows AS r MERGE (c:Chunk {id: r.id}) "
    "SET c.document_id = r.document_id, c.document_version = r.document_version, c.title = r.title, "
    "c.text = r.text, c.heading_path = r.heading_path, c.ord = r.ord, c.start_offset = r.start_offset, "
    "c.end_offset = r.end_offset, c.parent_id = r.parent_id, c.current = true"
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

# The passage-entity graph of the current chunks, for graph walks over the whole store.
CURRENT_MENTION_EDGES = "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE c.current RETURN c.id, e.id"
CURRENT_ABOUT_EDGES = "MATCH (c:Chunk)-[:ABOUT]->(e:Entity) WHERE c.current RETURN c.id, e.id"

UPSERT_RELATIONS = (
    "UNWIND $rows AS r MATCH (a:Entity {id: r.source_id}), (b:Entity {id: r.target_id}) "
    "MERGE (a)-[x:RELATED {id: r.id}]->(b) "
    "ON CREATE SET x.type = r.type, x.description = r.description, x.chunk_ids = r.chunk_ids "
    "ON MATCH SET x.chunk_ids = list_sort(list_distinct(list_concat(x.chunk_ids, r.chunk_ids)))"
)

GET_CHUNKS = (
    "MATCH (c:Chunk) WHERE c.id IN $ids RETURN c.id, c.document_id, c.document_version, c.text, c.heading_path, "
    "c.ord, c.start_offset, c.end_offset, c.parent_id, c.title"
)

GET_ENTITIES = "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id, e.name, e.label, e.description"

# Current chunks only: a superseded version's text supports nothing in the current graph.
SUPPORTING_CHUNKS = (
    "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) WHERE e.id IN $ids AND c.current RETURN e.id, c.id, m.count"
)
ABOUT_CHUNKS = "MATCH (c:Chunk)-[:ABOUT]->(e:Entity) WHERE e.id IN $ids AND c.current RETURN e.id, c.id"

GET_RELATIONS_OF = (
    "MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE a.id = $entity_id OR b.id = $entity_id "
    "RETURN x.id, x.type, x.description, x.chunk_ids, a.id, b.id"
)


def count_nodes(table: str) -> str:
    """Count the rows of a node table (``table`` comes from ``NODE_TABLES``, never from a user)."""
    return f"MATCH (n:{table}) RETURN count(n)"


def count_rels(table: str) -> str:
    """Count the rows of a relationship table (``table`` comes from ``REL_TABLES``, never from a user)."""
    return f"MATCH ()-[r:{table}]->() RETURN count(r)"
