"""``QdrantCollectionSettings``: how a Qdrant server lays out the collections (conf/vector_store/qdrant.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components import defaults
from agrag.components.data_models.closed_set import ClosedSet


class VectorQuantization(ClosedSet, what="vector quantization"):
    """``none``: float32 vectors; ``int8``: scalar quantization, a quarter of the memory, rescored from float32."""

    NONE = "none"
    INT8 = "int8"


@dataclass(frozen=True, slots=True)
class QdrantCollectionSettings:
    """Collection settings a Qdrant server applies when agrag creates a collection (an existing one keeps its own).

    Attributes:
        on_disk_payload: Keep payloads (chunk texts, names) on disk and only their indexes in memory.
        hnsw_m: Edges per node of the HNSW graph (more: better recall, more memory).
        hnsw_ef_construct: Candidates kept while building the graph (more: better graph, slower build).
        quantization: ``int8`` keeps int8 copies of the vectors in memory for the search, rescored with the
            originals.
    """

    on_disk_payload: bool = defaults.QDRANT_ON_DISK_PAYLOAD
    hnsw_m: int = defaults.QDRANT_HNSW_M
    hnsw_ef_construct: int = defaults.QDRANT_HNSW_EF_CONSTRUCT
    quantization: VectorQuantization = VectorQuantization.NONE
