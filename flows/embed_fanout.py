"""Where the embed stage embeds: in the ingesting process, or on Dask workers through Prefect's Dask task runner.

``slice_embedder`` picks by ``ingest.parallel`` and the size of the batch. Both kinds yield ``(slice index,
vectors)`` pairs; the embed task journals each slice as it arrives, so the phase journal is the same either way: a
slice a killed worker held is embedded again (Dask gives it to another worker, or the next run does), a journaled
one never is. Workers only compute vectors. They open no store: the ingesting process keeps the embedding cache,
the journal and every write.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from prefect import task
from prefect.cache_policies import NO_CACHE

from agrag.components.embedders.sentence_transformers_text_embedder import (
    SentenceTransformersTextEmbedder,
    limit_threads,
)
from agrag.flows.ingest_control import IngestControl, checkpoint
from agrag.pipelines.parallel_config import ParallelConfig

Vectors = list[list[float]]
# Chunks embedded in-process between two journal saves: small enough to lose little to a kill, large enough to
# batch well.
EMBED_SLICE = 512


class SliceEmbedder(Protocol):
    """Embeds slices of texts, yielding each slice's vectors (in any order) as it is done."""

    @property
    def where(self) -> str:
        """Where the vectors are computed, for the embed stage's line ("" in the ingesting process)."""
        ...

    @property
    def slice_chunks(self) -> int:
        """About how many chunks a slice should hold."""
        ...

    def embed_slices(
        self, slices: Sequence[Sequence[str]], control: IngestControl | None
    ) -> Iterator[tuple[int, Vectors]]:
        """Yield ``(index in slices, vectors of its texts)`` for every slice; ``control`` is checked between slices."""
        ...


def packed(vectors: Vectors) -> list[array[float]]:
    """``vectors`` as float32 arrays, which is what the embedders compute and the stores keep.

    A 384-dimension vector is about 12 KB as a list of Python floats and 1.6 KB packed: an ingestion holds every
    vector of its run until the write, which at 1,000,000 chunks is the difference between fitting in memory or not.
    """
    return [array("f", vector) for vector in vectors]


def embed_all(
    embedder: SliceEmbedder, texts: Sequence[str], control: IngestControl | None = None
) -> list[array[float]]:
    """The vectors of ``texts``, in order, embedded a slice at a time and kept packed (``packed``)."""
    size = embedder.slice_chunks
    slices = [texts[i : i + size] for i in range(0, len(texts), size)]
    done = {index: packed(vectors) for index, vectors in embedder.embed_slices(slices, control)}
    return [vector for index in range(len(slices)) for vector in done[index]]


@dataclass(frozen=True, slots=True)
class InProcessEmbedding:
    """Slices embedded one after the other by the ingesting process's own model."""

    embedder: SentenceTransformersTextEmbedder
    slice_chunks: int = EMBED_SLICE
    where: str = ""

    def embed_slices(
        self, slices: Sequence[Sequence[str]], control: IngestControl | None
    ) -> Iterator[tuple[int, Vectors]]:
        """Embed each slice in turn, checking ``control`` before each."""
        for index, texts in enumerate(slices):
            checkpoint(control)
            yield index, self.embedder.embed_batch(texts)


@dataclass(frozen=True, slots=True)
class WorkerEmbedder:
    """What a worker needs to load the data dir's embedding model: sent with every slice (it loads once)."""

    model: str
    device: str
    batch_size: int
    torch_threads: int
    backend: str = "torch"
    onnx_dir: str | None = None


@task(name="embed-slice", cache_policy=NO_CACHE, persist_result=False)
def embed_slice(embedder: WorkerEmbedder, texts: list[str]) -> Vectors:
    """Embed one slice of texts on a Dask worker (the model is loaded once per worker process)."""
    if embedder.torch_threads:
        limit_threads(embedder.torch_threads)
    local = SentenceTransformersTextEmbedder(
        embedder.model, embedder.device, embedder.batch_size, backend=embedder.backend, onnx_dir=embedder.onnx_dir
    )
    return local.embed_batch(texts)


@contextmanager
def slice_embedder(
    parallel: ParallelConfig, address: str | None, embedder: SentenceTransformersTextEmbedder, chunks: int
) -> Iterator[SliceEmbedder]:
    """The embedder of an embed stage of ``chunks`` chunks: Dask workers for a batch of ``parallel.min_chunks`` or more.

    Those are the workers of the scheduler at ``address`` when it is set, else a local cluster of
    ``parallel.workers`` processes (none when 0: this process embeds), which lives as long as the block.

    Raises:
        EmbeddingWorkersError: the cluster could not be started or reached, or has no workers.
    """
    if (parallel.workers == 0 and not address) or chunks == 0 or chunks < parallel.min_chunks:
        yield InProcessEmbedding(embedder)
        return
    # imported here: Dask and its Prefect runner add a fifth of a second to every process that loads the ingest flow
    from agrag.flows.dask_embedding import dask_slice_embedder  # noqa: PLC0415

    with dask_slice_embedder(parallel, address, embedder) as on_workers:
        yield on_workers
