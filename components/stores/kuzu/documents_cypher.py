"""Cypher of the documents role: versions, origins, settings hashes, plans, listing and deleting documents."""

from agrag.components.stores.kuzu.cypher_common import in_scope as _in_scope
from agrag.components.stores.kuzu.rows import DocumentRow

DOCUMENT_VERSIONS = "MATCH (d:Document) WHERE d.id IN $ids RETURN d.id, d.version"
DOCUMENT_ORIGINS = f"MATCH (d:Document) WHERE d.id IN $ids AND d.version <> '' RETURN {DocumentRow.returning(upto=-1)}"
SET_SOURCE_FOLDERS = "UNWIND $rows AS r MATCH (d:Document {id: r.id}) SET d.source_folder = r.source_folder"
DOCUMENT_CONFIG_HASHES = "MATCH (d:Document) WHERE d.id IN $ids RETURN d.id, d.config_hash"
# The commit of a delete, in one statement (a kill keeps all of it or none): the document loses its version, and its
# committed chunks their currency (still readable by id, as superseded); chunks never committed stay so.
DELETE_DOCUMENT = (
    "MATCH (d:Document {id: $id}) SET d.version = '', d.chunk_count = 0 "
    "WITH d MATCH (d)-[:HAS_CHUNK]->(c:Chunk) WHERE c.current IS NOT NULL SET c.current = false"
)
CHUNK_IDS_OF_DOCUMENT = (
    "MATCH (d:Document {id: $id})-[:HAS_CHUNK]->(c:Chunk) RETURN c.id, c.document_version, c.ord ORDER BY c.ord"
)
DOCUMENT_KNOWN = "MATCH (d:Document {id: $id}) RETURN d.id"
SET_DOCUMENT_PLANS = "UNWIND $rows AS r MATCH (d:Document {id: r.id}) SET d.plan = r.plan"
SET_CONFIG_HASHES = "UNWIND $rows AS r MATCH (d:Document {id: r.id}) SET d.config_hash = r.config_hash"

# The committed documents (a document gets its version when its batch commits), in source path order, a page at a
# time; COUNT_DOCUMENTS counts what LIST_DOCUMENTS pages through (see KuzuConnection._run_page).
_COMMITTED_IN_SCOPE = f"MATCH (d:Document) WHERE d.version <> '' AND {_in_scope('d.id')}"
LIST_DOCUMENTS = (
    f"{_COMMITTED_IN_SCOPE} RETURN {DocumentRow.RETURN} ORDER BY d.source_path, d.id SKIP $skip LIMIT $limit"
)
COUNT_DOCUMENTS = f"{_COMMITTED_IN_SCOPE} RETURN count(*)"
