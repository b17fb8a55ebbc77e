"""The graph store interface: the union of one protocol per role.

The roles: documents, ingest writes, resolution, communities, retrieval reads, scoped evidence reads, fact support,
user-written queries, status.

A client that needs one role takes that protocol (``GraphEvidenceReader``, ``GraphIngestWriter``...); ``GraphStore``
is every role at once, for the code that opens and hands out the store.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agrag.components.stores.graph_read_roles import (
    GraphEvidenceReader,
    GraphFactReader,
    GraphQueryRunner,
    GraphRetrievalReader,
    GraphStatusReader,
)
from agrag.components.stores.graph_write_roles import (
    GraphCommunityStore,
    GraphDocumentStore,
    GraphIngestWriter,
    GraphResolutionLog,
)

__all__ = [
    "GENERATION_KEY",
    "GraphCommunityStore",
    "GraphDocumentStore",
    "GraphEvidenceReader",
    "GraphFactReader",
    "GraphIngestWriter",
    "GraphQueryRunner",
    "GraphResolutionLog",
    "GraphRetrievalReader",
    "GraphStatusReader",
    "GraphStore",
]

# StoreInfo key that changes on every committed write: readers that cache graph snapshots compare it.
GENERATION_KEY = "generation"


@runtime_checkable
class GraphStore(
    GraphDocumentStore,
    GraphIngestWriter,
    GraphResolutionLog,
    GraphCommunityStore,
    GraphRetrievalReader,
    GraphEvidenceReader,
    GraphFactReader,
    GraphQueryRunner,
    GraphStatusReader,
    Protocol,
):
    """What ingestion writes and retrieval reads in the graph: every role protocol at once."""
