"""``EdgeShardSettings``: how the embedded Qdrant Edge shards index their vectors (conf/vector_store/edge.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components import defaults
from agrag.components.data_models.qdrant_collection_settings import VectorQuantization


@dataclass(frozen=True, slots=True)
class EdgeShardSettings:
    """How a Qdrant Edge collection is indexed for search once it is large enough.

    Points are written to a growing segment, which every query scans whole, float32 vector by vector. Once that
    segment holds more than ``indexing_threshold_kb`` of vectors, indexing (``QdrantEdgeVectorStore.optimize``)
    turns it into a search segment: with ``int8`` quantization a query scans int8 copies of the vectors (a quarter
    of the bytes) and rescores the best ``oversampling`` times as many candidates as it asked for with the float32
    originals, so the scores it returns are exact cosines.

    Attributes:
        quantization: ``int8`` (the default) or ``none`` (search segments scan the float32 vectors).
        indexing_threshold_kb: Vectors a growing segment may hold before indexing turns it into a search segment.
        oversampling: Candidates rescored per point asked for (1.0: only as many; more: closer to an exact scan).
    """

    quantization: VectorQuantization = VectorQuantization.INT8
    indexing_threshold_kb: int = defaults.EDGE_INDEXING_THRESHOLD_KB
    oversampling: float = defaults.EDGE_OVERSAMPLING
