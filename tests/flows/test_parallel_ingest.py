"""The embed stage on Dask workers (``ingest.parallel``): the store equals an in-process run's, whatever happens.

The 200-note synthetic corpus is ingested in this process, then with two local Dask workers (one of them killed
with SIGKILL while it embeds), then on a Dask cluster of the test's own, reached by ``AGRAG_DASK_ADDRESS``, that
goes away mid-run: that run fails with a typed error, and the next run reads the slices it finished from the phase
journal instead of embedding them again.
"""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import distributed
import numpy as np
import psutil
import pytest
from prefect.settings import PREFECT_API_URL

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.worker_errors import EmbeddingWorkersError
from agrag.flows import dask_embedding
from agrag.flows.embed_fanout import InProcessEmbedding, slice_embedder
from agrag.flows.ingest_flow import run_ingest
from agrag.flows.ingest_report import IngestReport
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.parallel_config import ParallelConfig
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import PHASE_JOURNAL_FILE, open_knowledge_store
from tests.support import synthetic_corpus

NOTES = 200
SLICE = 16  # 400 chunks: 25 slices, so a kill lands with some slices journaled and others not
PARALLEL = ["ingest.parallel.workers=2", "ingest.parallel.min_chunks=0", f"ingest.parallel.slice_chunks={SLICE}"]


@pytest.fixture(autouse=True)
def _embed_every_slice(unshared_embeddings: None) -> None:
    """What these tests watch is who embeds each slice: nothing may come from the session's embedding cache."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("notes")
    synthetic_corpus.write_corpus(folder, NOTES)
    return folder


@dataclass(frozen=True)
class Baseline:
    """The default runner's run: its report and data dir."""

    report: IngestReport
    data_dir: Path


@pytest.fixture(scope="module")
def in_process(prefect_harness: None, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Baseline:
    """The default runner's run: what every parallel run is held to."""
    data_dir = tmp_path_factory.mktemp("in-process")
    report = run_ingest(str(corpus), data_dir=str(data_dir))
    assert report.embedded_on == ""
    assert report.counts["Document"] == NOTES
    return Baseline(report, data_dir)


def _embedded_documents(data_dir: Path) -> int:
    """Documents whose chunk vectors the running ingestion has journaled (0 before the journal exists)."""
    path = data_dir / PHASE_JOURNAL_FILE
    if not path.exists():
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
        try:
            return int(db.execute("SELECT count(*) FROM phases WHERE phase = 'embed'").fetchone()[0])
        except sqlite3.OperationalError:  # the table is not made yet
            return 0


def _ingest_in_thread(corpus: Path, data_dir: Path, overrides: list[str]) -> tuple[threading.Thread, dict[str, object]]:
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["report"] = run_ingest(str(corpus), overrides, data_dir=str(data_dir))
        except Exception as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def _wait_until(condition: Callable[[], bool], thread: threading.Thread, what: str, seconds: float = 240) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert thread.is_alive(), f"the ingestion ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def _dask_workers() -> list[psutil.Process]:
    """The Dask worker processes a local cluster of this process spawned."""
    return [
        p
        for p in psutil.Process().children(recursive=True)
        if any("spawn_main" in part for part in p.cmdline()) and p.is_running()
    ]


def _vectors(data_dir: Path, ids: list[str]) -> dict[str, np.ndarray]:
    config = load_config()
    embedder = SentenceTransformersTextEmbedder()
    with open_knowledge_store(AgragSettings(data_dir=data_dir), config.vector_store, embedder) as store:
        return {p.id: np.asarray(p.dense) for p in store.chunks.fetch(ids, with_vectors=True)}


def _sample_chunk_ids(data_dir: Path) -> list[str]:
    config = load_config()
    with open_knowledge_store(
        AgragSettings(data_dir=data_dir), config.vector_store, SentenceTransformersTextEmbedder()
    ) as store:
        return store.graph.searchable_chunk_ids()[::37]


def test_two_local_workers_store_what_the_default_runner_stores_even_when_one_is_killed(
    in_process: Baseline, corpus: Path, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    thread, outcome = _ingest_in_thread(corpus, data_dir, PARALLEL)
    _wait_until(lambda: _embedded_documents(data_dir) > 0, thread, "a slice was journaled")
    workers = _dask_workers()
    assert len(workers) == 2, [p.cmdline() for p in workers]
    journaled_at_kill = _embedded_documents(data_dir)
    workers[0].send_signal(signal.SIGKILL)
    thread.join(timeout=300)
    assert not thread.is_alive()
    assert "error" not in outcome, outcome.get("error")
    report = outcome["report"]
    assert isinstance(report, IngestReport)
    assert journaled_at_kill < NOTES // 2, "the worker was killed while most slices were still to embed"
    assert report.embedded_on == "2 local Dask workers"
    assert report.counts == in_process.report.counts
    assert report.counts["chunk_vectors"] == in_process.report.chunks_by_kind["text"]
    assert not _dask_workers(), "the local cluster ends with the embed stage"
    # the same vectors as the default runner's (up to float rounding of another thread count)
    ids = _sample_chunk_ids(data_dir)
    ours, theirs = _vectors(data_dir, ids), _vectors(in_process.data_dir, ids)
    assert len(ours) == len(ids) > 5
    for chunk_id in ids:
        assert np.allclose(ours[chunk_id], theirs[chunk_id], atol=1e-4), chunk_id


@pytest.fixture
def own_cluster() -> Iterator[distributed.LocalCluster]:
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        env={"PREFECT_API_URL": str(PREFECT_API_URL.value())},
    )
    try:
        yield cluster
    finally:
        cluster.close()


def test_a_cluster_lost_mid_run_fails_clearly_and_the_next_run_embeds_only_the_rest(
    in_process: Baseline, corpus: Path, tmp_path: Path, own_cluster: distributed.LocalCluster, monkeypatch
) -> None:
    data_dir = tmp_path / "data"
    monkeypatch.setenv("AGRAG_DASK_ADDRESS", own_cluster.scheduler_address)
    thread, outcome = _ingest_in_thread(corpus, data_dir, PARALLEL)
    _wait_until(lambda: _embedded_documents(data_dir) > 0, thread, "a slice was journaled")
    own_cluster.close()
    thread.join(timeout=300)
    error = outcome.get("error")
    assert isinstance(error, EmbeddingWorkersError), outcome
    assert own_cluster.scheduler_address in str(error)
    assert "start the same ingestion again" in str(error)
    finished = _embedded_documents(data_dir)
    assert 0 < finished < NOTES

    monkeypatch.delenv("AGRAG_DASK_ADDRESS")
    report = run_ingest(str(corpus), data_dir=str(data_dir))
    assert report.documents_resumed.get("embed") == finished, "journaled slices are read back, not embedded again"
    assert report.counts == in_process.report.counts


def test_small_batches_and_zero_workers_embed_in_process(tmp_path: Path) -> None:
    embedder = SentenceTransformersTextEmbedder()
    with slice_embedder(ParallelConfig(workers=0, min_chunks=0), None, embedder, 10_000) as chosen:
        assert isinstance(chosen, InProcessEmbedding)
    with slice_embedder(ParallelConfig(workers=2, min_chunks=500), None, embedder, 499) as chosen:
        assert isinstance(chosen, InProcessEmbedding)
        assert chosen.where == ""


def test_an_unreachable_scheduler_is_a_typed_error_naming_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dask_embedding, "CONNECT_TIMEOUT", "1s")
    port = _free_port()
    with (
        pytest.raises(EmbeddingWorkersError, match="unset AGRAG_DASK_ADDRESS") as caught,
        slice_embedder(
            ParallelConfig(workers=1, min_chunks=0), f"tcp://127.0.0.1:{port}", SentenceTransformersTextEmbedder(), 10
        ),
    ):
        pytest.fail("no embedder without a scheduler")
    assert f"127.0.0.1:{port}" in str(caught.value)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_parallel_settings_do_not_change_what_is_journaled() -> None:
    from agrag.pipelines.ingest_components import phase_hashes

    config = load_config()
    parallel = load_config(PARALLEL)
    assert phase_hashes(config, None) == phase_hashes(parallel, None)
