"""The schema of the graph and the catalog: tables, columns added since the first release, counts, store info."""

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

# A write transaction of several statements (``KuzuConnection.transaction()``).
BEGIN_WRITE = "BEGIN TRANSACTION"
COMMIT_WRITE = "COMMIT"
ROLLBACK_WRITE = "ROLLBACK"

GET_INFO = "MATCH (i:StoreInfo) RETURN i.key, i.value"

SET_INFO = "MERGE (i:StoreInfo {key: $key}) SET i.value = $value"

# The catalog. Table names in `table_info` come from `show_tables`, never from a user.
SHOW_TABLES = "CALL show_tables() RETURN *"
TABLE_KINDS = "CALL show_tables() RETURN name, type"


def count_nodes(table: str) -> str:
    """Count the rows of a node table (``table`` comes from ``NODE_TABLES``, never from a user)."""
    return f"MATCH (n:{table}) RETURN count(n)"


def count_rels(table: str) -> str:
    """Count the rows of a relationship table (``table`` comes from ``REL_TABLES``, never from a user)."""
    return f"MATCH ()-[r:{table}]->() RETURN count(r)"


def count_live_rels(table: str) -> str:
    """Count the rows of a relationship table whose two ends exist (``table`` comes from ``REL_TABLES``).

    Why not ``count(r)``: Kùzu 0.11.3 replays a committed DETACH DELETE from its WAL (after a kill -9) leaving the
    deleted node's links behind as phantoms that plans reading no property still see, for good. Every node table
    a relationship joins has an ``id``; reading both ends' leaves the phantoms out.
    """
    return f"MATCH (a)-[r:{table}]->(b) RETURN count(a.id + b.id)"


def table_info(table: str) -> str:
    """The columns of a table (``table`` comes from ``show_tables``, never from a user)."""
    return f"CALL table_info('{table}') RETURN *"


def show_connection(table: str) -> str:
    """The node tables a relationship table joins (``table`` comes from ``show_tables``)."""
    return f"CALL show_connection('{table}') RETURN *"
