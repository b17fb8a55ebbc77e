"""``ingest.parallel``: embedding a large ingestion on Dask workers (``flows/embed_fanout.py``)."""

from __future__ import annotations

from pydantic import Field

from agrag.components import defaults
from agrag.pipelines.strict_model import StrictModel


class ParallelConfig(StrictModel):
    """Whether and how the embed stage of a large ingestion is fanned out to Dask worker processes.

    Only embedding is fanned out: it is most of an offline ingestion's time. Extraction stays in the ingesting
    process (the lexical extractor decides with statistics of the whole batch; LLM extraction waits on the
    endpoint, with ``ingest.extractor.concurrency`` requests in flight), and every write is committed by that
    process, in order. None of these settings changes what is stored.
    """

    workers: int = Field(
        0,
        ge=0,
        le=256,
        description="0: embed in the ingesting process. N: start a local Dask cluster of N worker processes for the "
        "embed stage of an ingestion of at least min_chunks chunks. With AGRAG_DASK_ADDRESS set, that cluster's "
        "workers embed such ingestions whatever this number is, and no local cluster is started.",
    )
    min_chunks: int = Field(
        defaults.PARALLEL_MIN_CHUNKS,
        ge=0,
        description="Smaller ingestions embed in the ingesting process: starting workers and loading the model in "
        "each costs seconds.",
    )
    slice_chunks: int = Field(
        defaults.PARALLEL_SLICE_CHUNKS,
        ge=1,
        le=100_000,
        description="Chunks sent to a worker at a time. A finished slice is journaled at once, so a killed worker or "
        "run loses at most the slices in flight.",
    )
    torch_threads: int = Field(
        0,
        ge=0,
        le=256,
        description="Threads each local worker's embedding model uses; 0: this machine's cores divided among the "
        "workers. Workers of a cluster at AGRAG_DASK_ADDRESS keep their own setting when 0.",
    )
