"""``VectorBackend``: where a data dir keeps its vectors."""

from __future__ import annotations

from agrag.components.data_models.closed_set import ClosedSet


class VectorBackend(ClosedSet, what="vector store backend"):
    """``edge``: Qdrant Edge shards inside the data dir (the embedded default); ``qdrant``: a Qdrant server."""

    EDGE = "edge"
    QDRANT = "qdrant"
