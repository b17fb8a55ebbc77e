"""``KuzuGraphStore``: the graph in an embedded Kùzu database file, composed of one mixin per store role."""

from __future__ import annotations

from pathlib import Path

from agrag.components.stores.kuzu.bulk_load import KuzuBulkLoad
from agrag.components.stores.kuzu.communities import KuzuCommunities
from agrag.components.stores.kuzu.documents import KuzuDocuments
from agrag.components.stores.kuzu.evidence_reads import KuzuEvidenceReads
from agrag.components.stores.kuzu.fact_reads import KuzuFactReads
from agrag.components.stores.kuzu.ingest_writes import KuzuIngestWrites
from agrag.components.stores.kuzu.resolution import KuzuResolution
from agrag.components.stores.kuzu.retrieval_reads import KuzuRetrievalReads
from agrag.components.stores.kuzu.status import KuzuStatus
from agrag.components.stores.kuzu.user_queries import READ_ONLY_MAX_BYTES, KuzuUserQueries

__all__ = ["READ_ONLY_MAX_BYTES", "KuzuGraphStore"]


class KuzuGraphStore(
    KuzuDocuments,
    KuzuIngestWrites,
    KuzuBulkLoad,
    KuzuResolution,
    KuzuCommunities,
    KuzuRetrievalReads,
    KuzuEvidenceReads,
    KuzuFactReads,
    KuzuUserQueries,
    KuzuStatus,
):
    """Documents, chunks, entities and relations in one Kùzu database file.

    Kùzu allows one read-write database per file per process and one process per file; a second process gets a
    ``StoreLockedError``. The store can be shared between threads:

    - **Reads** run on a connection of the calling thread (made on first use from the one ``kuzu.Database``), so
      parallel requests read in parallel. A read sees what was committed when it started; every write statement
      commits on its own, so several writes are made visible together only by the caller's own lock
      (``KnowledgeStore.writing()``).
    - **Writes** (schema, upserts, ``set_info``, merges, retirement, deletes, communities: every statement of a
      method that changes the graph) run one at a time on the one write connection.
    - **No read runs while a write statement runs.** Kùzu checkpoints when a write commits and its log has grown,
      and a checkpoint needs every transaction of the process to have ended: with reads in flight it waits 5 s and
      then fails the write statement, whose data was committed already (measured with four reading threads). So
      write statements take an internal statement lock exclusively and reads take it shared; it is held for one
      statement (one read-only transaction for ``run_read_only``), never across calls.

    ``buffer_pool_mb`` bounds Kùzu's page cache (by default Kùzu takes about 80% of the machine's memory).

    The store is composed of one mixin per role over one shared ``KuzuConnection`` (the database, its connections
    and the statement lock); each serves one role protocol of ``graph_store`` and sends only the Cypher of its own
    ``*_cypher`` module.

    Usage:
        ```python
        store = KuzuGraphStore(Path(".agrag/graph.kuzu"), buffer_pool_mb=1024)
        print(store.counts())
        store.close()
        ```
    """

    def __init__(self, path: Path, buffer_pool_mb: int | None = None, *, read_only: bool = False) -> None:
        """Open (or create) the database file at ``path`` and its schema.

        An existing file is checked first (``KuzuOpenCheck``): an empty one is refused, and one that changed since
        agrag last closed it is opened in a child process before this one opens it, since Kùzu crashes the process
        on some damaged files.

        Args:
            path: The database file.
            buffer_pool_mb: Kùzu's buffer pool in MB; None leaves Kùzu's default (about 80% of the memory).
            read_only: Open an existing file only to read it (no check, no schema, nothing written).

        Raises:
            ConfigError: ``buffer_pool_mb`` is not a positive number of MB.
            CorruptedStoreError: the file is empty or damaged.
            StoreLockedError: another process holds the file.
            StoreError: the file could not be opened.
        """
        super().__init__(path, buffer_pool_mb, read_only=read_only)
