"""Slices embedded on Dask workers through Prefect's Dask task runner (``ingest.parallel``).

Imported only when an embed stage goes to workers (``embed_fanout.slice_embedder``): Dask and prefect-dask take
a fifth of a second to import, which every other process that loads the ingest flow would pay for nothing.
"""

from __future__ import annotations

import contextvars
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import distributed
from prefect.client.orchestration import get_client
from prefect.context import TaskRunContext
from prefect_dask.task_runners import DaskTaskRunner, PrefectDaskFuture

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.worker_errors import EmbeddingWorkersError
from agrag.flows.embed_fanout import Vectors, WorkerEmbedder, embed_slice
from agrag.flows.ingest_control import IngestControl, checkpoint
from agrag.pipelines.parallel_config import ParallelConfig

T = TypeVar("T")

# Slices out per worker: one computing, one waiting, so no worker idles while the next slice travels.
IN_FLIGHT_PER_WORKER = 2
CONNECT_TIMEOUT = "20s"
WAIT_FOR_WORKERS_SECONDS = 60
RESTART_FIX = (
    "Check the workers' logs (a worker killed over and over is often out of memory: lower ingest.parallel.workers "
    "or ingest.parallel.slice_chunks), or set ingest.parallel.workers=0 to embed in this process."
)


@dataclass(frozen=True, slots=True)
class _Pending:
    index: int
    texts: Sequence[str]
    missing: list[int]
    found: dict[int, list[float]]
    future: PrefectDaskFuture[Vectors]


class DaskEmbedding:
    """Slices embedded on the workers of an open Dask task runner, a few in flight per worker.

    Texts the embedding cache knows are read from it here and never sent; vectors computed by workers are added
    to it as they arrive.
    """

    def __init__(
        self,
        runner: DaskTaskRunner,
        local: SentenceTransformersTextEmbedder,
        worker: WorkerEmbedder,
        *,
        workers: int,
        slice_chunks: int,
        where: str,
    ) -> None:
        self._runner = runner
        self._local = local
        self._worker = worker
        self._in_flight = max(1, workers) * IN_FLIGHT_PER_WORKER
        self.slice_chunks = slice_chunks
        self.where = where

    def embed_slices(
        self, slices: Sequence[Sequence[str]], control: IngestControl | None
    ) -> Iterator[tuple[int, Vectors]]:
        """Send slices to the workers, at most a few per worker at a time; yield each as it comes back."""
        todo = iter(enumerate(slices))
        pending: dict[distributed.Future[Vectors], _Pending] = {}
        finished = distributed.as_completed(loop=self._runner.client.loop)  # type: ignore[no-untyped-call]
        ready: list[tuple[int, Vectors]] = []
        try:
            while True:
                while len(pending) < self._in_flight and self._send_next(todo, pending, finished, ready):
                    pass
                yield from ready
                ready.clear()
                if not pending:
                    return
                checkpoint(control)
                yield self._received(pending.pop(next(finished)))
        finally:
            if pending:
                self._runner.client.cancel(list(pending))  # type: ignore[no-untyped-call]

    def _send_next(
        self,
        todo: Iterator[tuple[int, Sequence[str]]],
        pending: dict[distributed.Future[Vectors], _Pending],
        finished: distributed.as_completed,
        ready: list[tuple[int, Vectors]],
    ) -> bool:
        """Send the next slice with texts the cache lacks (slices it knows whole go to ``ready``); False at the end."""
        for index, texts in todo:
            found, missing = self._local.cached(texts)
            if not missing:
                ready.append((index, self._local.completed(texts, found, [], [])))
                continue
            parameters = {"embedder": self._worker, "texts": [texts[i] for i in missing]}
            future: PrefectDaskFuture[Vectors] = _outside_task_run(
                partial(self._runner.submit, embed_slice, parameters)
            )
            pending[future.wrapped_future] = _Pending(index, texts, missing, found, future)
            finished.add(future.wrapped_future)  # type: ignore[no-untyped-call]
            return True
        return False

    def _received(self, sent: _Pending) -> tuple[int, Vectors]:
        try:
            computed = sent.future.result()
        except distributed.KilledWorker as exc:
            raise EmbeddingWorkersError(
                self.where, f"slice {sent.index} killed its worker every time ({exc})", RESTART_FIX
            ) from exc
        except (OSError, distributed.TimeoutError, distributed.client.FutureCancelledError) as exc:
            raise EmbeddingWorkersError(
                self.where, f"the cluster went away ({type(exc).__name__}: {exc})", RESTART_FIX
            ) from exc
        return sent.index, self._local.completed(sent.texts, sent.found, sent.missing, computed)


def _outside_task_run(submit: Callable[[], T]) -> T:
    """Call ``submit`` as if no Prefect task were running.

    The runner sends the current task run's context with each slice, and that holds the embed task's parameters:
    every chunk of the batch, pickled again per slice. Outside it, a slice's task run belongs to the flow run.
    """
    context = contextvars.copy_context()

    def detached() -> T:
        TaskRunContext.__var__.set(None)  # type: ignore[arg-type]  # "no task running" is what None means
        return submit()

    return context.run(detached)


def _prefect_api_url() -> str:
    """The Prefect API this process reports to (its temporary server's, if it runs one), for the local workers.

    Without it each worker process would start a temporary Prefect server of its own.
    """
    with get_client(sync_client=True) as client:
        return str(client.api_url)


def _local_runner(parallel: ParallelConfig) -> tuple[DaskTaskRunner, int]:
    threads = parallel.torch_threads or max(1, (os.cpu_count() or 1) // parallel.workers)
    cluster: dict[str, object] = {
        "n_workers": parallel.workers,
        "threads_per_worker": 1,
        "processes": True,
        "dashboard_address": None,
        "silence_logs": logging.ERROR,
        # Dask's nanny sets OMP_NUM_THREADS=1 for every worker; the model's share of the cores is ``threads``
        "env": {
            "PREFECT_API_URL": _prefect_api_url(),
            "OMP_NUM_THREADS": str(threads),
            "MKL_NUM_THREADS": str(threads),
        },
    }
    return DaskTaskRunner(cluster_kwargs=cluster), threads


@contextmanager
def _quiet_dask() -> Iterator[None]:
    """Keep Dask's chatter out of the run's output while the cluster lives.

    Its INFO lines, and warnings such as a worker killed at shutdown after 4 s; what fails the embedding reaches the
    user as an ``EmbeddingWorkersError``.
    """
    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        logger.setLevel(level)


def _worker_count(client: distributed.Client, where: str) -> int:
    try:
        client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS_SECONDS)
    except (TimeoutError, distributed.TimeoutError) as exc:
        raise EmbeddingWorkersError(
            where,
            f"no worker joined the scheduler within {WAIT_FOR_WORKERS_SECONDS} s",
            "Start workers with `dask worker <address>` (the agrag image has it), or unset AGRAG_DASK_ADDRESS.",
        ) from exc
    return len(client.scheduler_info()["workers"])


@contextmanager
def dask_slice_embedder(
    parallel: ParallelConfig, address: str | None, embedder: SentenceTransformersTextEmbedder
) -> Iterator[DaskEmbedding]:
    """Dask workers that embed slices (``embed_fanout.slice_embedder`` decides when).

    Those of the scheduler at ``address`` when it is set, else a local cluster of ``parallel.workers`` processes,
    which lives as long as the block.

    Raises:
        EmbeddingWorkersError: the cluster could not be started or reached, or has no workers.
    """
    if address:
        runner, threads = (
            DaskTaskRunner(address=address, client_kwargs={"timeout": CONNECT_TIMEOUT}),
            parallel.torch_threads,
        )
        where = f"the Dask workers at {address}"
    else:
        runner, threads = _local_runner(parallel)
        where = f"{parallel.workers} local Dask workers"
    worker = WorkerEmbedder(
        embedder.model, embedder.device, embedder.batch_size, threads, embedder.backend, embedder.onnx_dir
    )
    with _quiet_dask(), runner:
        try:
            workers = _worker_count(runner.client, where)
        except (OSError, distributed.TimeoutError) as exc:
            fix = "Start it (`dask scheduler`) or unset AGRAG_DASK_ADDRESS." if address else RESTART_FIX
            raise EmbeddingWorkersError(where, f"{type(exc).__name__}: {exc}", fix) from exc
        if address:
            where = f"{workers} Dask workers at {address}"
        yield DaskEmbedding(runner, embedder, worker, workers=workers, slice_chunks=parallel.slice_chunks, where=where)
