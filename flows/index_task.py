"""The ``index`` stage: the vector collections whose growing segment outgrew the threshold are indexed for search.

Qdrant Edge writes new points to a growing segment that every search scans, float32 vector by vector; at a million
chunks that scan is most of a search (159 ms of 1,000,000 chunk vectors, 106 ms of 624,084 entity vectors). Indexing
makes such a segment a search segment scanned through int8 copies (``conf/vector_store/edge.yaml``). It runs at the
end of an ingestion and of ``agrag finalize``, only for collections ``index_pending`` names, and holds the write side
of the data dir: Qdrant Edge's optimizer keeps the Python interpreter until it is done, so nothing else in the
process runs meanwhile anyway.
"""

from __future__ import annotations

from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_store import VectorCollection
from agrag.flows.ingest_report import index_line
from agrag.flows.stage_clock import StageClock

INDEX_STAGE = "index"


def index_vectors(store: KnowledgeStore, clock: StageClock) -> dict[str, int] | None:
    """Run the ``index`` stage if a collection has points waiting; return the points of each collection it indexed.

    None when nothing was due (the stage is then not run, and not shown).

    Raises:
        NoSpaceLeftError: the disk lacks what indexing writes (``VectorStore.optimize_room``), checked first.
    """
    due = [c for c in VectorCollection if store.vectors(c).index_pending()]
    if not due:
        return None
    names = ", ".join(c.value for c in due)
    store.require_room(sum(store.vectors(c).optimize_room() for c in due), f"index the {names} vectors for search")

    def index() -> dict[str, int]:
        with store.writing():
            return {c.value: store.vectors(c).count() for c in due if store.vectors(c).optimize()}

    indexed = clock.run(INDEX_STAGE, index)
    clock.completed_line(INDEX_STAGE, index_line(indexed))
    return indexed
