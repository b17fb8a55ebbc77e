"""The ingestion queue over a real runtime and real flows (under the session's Prefect harness), on small corpora."""

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.ingestion_run import IngestionRun, RunKind, RunSource, RunState, StageState
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.sqlite_run_registry import SqliteRunRegistry
from agrag.flows import run_context
from agrag.flows.ingest_flow import run_ingest
from agrag.flows.ingest_report import IngestReport
from agrag.flows.run_outcome import report_from
from agrag.pipelines.runtime import Runtime, open_runtime, serving
from agrag.service.api.errors import NotReadyError
from agrag.service.server.ingestion_queue import IngestionQueue
from tests.service.conftest import settings_of

NOTES = {
    "orion.md": "# Orion Planner\n\nMaria Chen wrote the Orion Planner in Lyon. It schedules the Atlas Controller.\n",
    "atlas.md": "# Atlas Controller\n\nThe Atlas Controller runs in Oslo. Jonas Berg owns it since 2021.\n",
    "storm.md": "# Replanning storm\n\nIn Lyon the Orion Planner replanned every minute until Maria Chen fixed it.\n",
}


def corpus(root: Path, name: str, notes: int = 3) -> Path:
    folder = root / name
    folder.mkdir()
    for file, text in list(NOTES.items())[:notes]:
        (folder / file).write_text(text.replace("Lyon", f"Lyon ({name})"), encoding="utf-8")
    return folder


class Gate:
    """Holds a run at the start of one stage until released, so a test can act while that run is running."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()
        original = run_context.log_stage

        def gated(name: str, state: StageState, line: str) -> None:
            original(name, state, line)
            if name == stage and state == StageState.RUNNING and not self.release.is_set():
                self.reached.set()
                assert self.release.wait(60), "the test never released the gate"

        monkeypatch.setattr(run_context, "log_stage", gated)

    def wait(self) -> None:
        assert self.reached.wait(120), "the run never reached the gated stage"
        self.reached.clear()


def wait_for(
    check: Callable[[], IngestionRun], done: Callable[[IngestionRun], bool], timeout: float = 120
) -> IngestionRun:
    deadline = time.monotonic() + timeout
    while True:
        run = check()
        if done(run):
            return run
        assert time.monotonic() < deadline, f"run {run.id} is {run.state}: {run.message}"
        time.sleep(0.05)


def final(queue: IngestionQueue, run_id: str) -> IngestionRun:
    return wait_for(lambda: queue.get(run_id), lambda r: r.state.final)


@pytest.fixture
def runtime(tmp_path: Path, embedder: SentenceTransformersTextEmbedder, prefect_harness: None) -> Iterator[Runtime]:
    settings = settings_of(tmp_path / "data")
    with open_runtime([], settings, require_data=False, embedder=embedder) as opened, serving(opened):
        yield opened


def test_runs_go_in_order_a_queued_run_says_whom_it_waits_for_and_cancel_works(
    runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch, "embed")
    queue = IngestionQueue(runtime, runtime.runs)
    queue.start()
    try:
        first = queue.submit_ingest(str(corpus(tmp_path, "first")), [], RunSource.HTTP)
        assert first.state == RunState.QUEUED and first.message.startswith("Starts now")
        gate.wait()
        second = queue.submit_ingest(str(corpus(tmp_path, "second")), [], RunSource.HTTP)
        third = queue.submit_ingest(str(corpus(tmp_path, "third")), [], RunSource.CLI)
        assert second.state == RunState.QUEUED and second.queued_behind == (first.id,)
        assert f"Queued behind run: {first.id} (ingest of " in second.message and "running" in second.message
        assert third.queued_behind == (first.id, second.id) and "Queued behind 2 runs" in third.message
        assert [r.id for r in queue.pending()] == [first.id, second.id, third.id]

        cancelled = queue.cancel(third.id)
        assert cancelled.state == RunState.CANCELLED and "Cancelled before it started" in cancelled.message
        stopping = queue.cancel(first.id)
        assert stopping.state == RunState.RUNNING and "stops at its next safe point" in stopping.message
        gate.release.set()

        first_done, second_done = final(queue, first.id), final(queue, second.id)
    finally:
        queue.shutdown(30)

    assert first_done.state == RunState.CANCELLED, first_done.message
    assert "stopped at a safe point (cancelled through the API)" in first_done.message
    assert first_done.report is None and first_done.prefect_flow_run_id
    stages = {s.name: s for s in first_done.stages}
    assert stages["load"].state == StageState.COMPLETED and stages["load"].line == "3 files read, 0 failed"
    assert stages["embed"].state == StageState.FAILED and "write" not in stages

    assert second_done.state == RunState.COMPLETED, second_done.message
    assert second_done.started >= first_done.finished and second_done.message == "3 files ingested, 0 unchanged."
    assert {s.name for s in second_done.stages} >= {"load", "chunk", "embed", "write", "communities", "reports"}
    assert all(s.state in (StageState.COMPLETED, StageState.SKIPPED) for s in second_done.stages)
    assert second_done.report is not None
    report = report_from(second_done.report, IngestReport)
    assert report.documents_ingested == 3 and report.counts["Document"] == 3  # the cancelled run wrote nothing
    assert [r.id for r in queue.runs()] == [third.id, second.id, first.id]
    assert queue.last_finished() == second_done
    assert queue.get(third.id).state == RunState.CANCELLED  # never ran


def test_shutdown_interrupts_the_running_run_at_a_safe_point_and_records_the_queued_ones(
    runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch, "embed")
    queue = IngestionQueue(runtime, runtime.runs)
    queue.start()
    running = queue.submit_ingest(str(corpus(tmp_path, "running")), [], RunSource.HTTP)
    gate.wait()
    waiting = queue.submit_delete("d-anything", [], RunSource.HTTP)
    stopper = threading.Thread(target=queue.shutdown, args=(30,))
    started = time.monotonic()
    stopper.start()
    wait_for(lambda: queue.get(running.id), lambda r: "shutting down" in r.message)
    with pytest.raises(NotReadyError, match="shutting down"):
        queue.submit_ingest(str(tmp_path), [], RunSource.HTTP)
    gate.release.set()
    stopper.join(30)
    assert not stopper.is_alive() and time.monotonic() - started < 30

    interrupted, dropped = queue.get(running.id), queue.get(waiting.id)
    assert interrupted.state == RunState.INTERRUPTED, interrupted.message
    assert "stopped at a safe point (the server is shutting down)" in interrupted.message
    assert "resumes from its phase markers" in interrupted.message
    assert dropped.kind == RunKind.DELETE and dropped.state == RunState.INTERRUPTED
    assert "stopped before this run started; nothing was written" in dropped.message


def test_shutdown_never_waits_longer_than_its_timeout(
    runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch, "embed")
    queue = IngestionQueue(runtime, runtime.runs)
    queue.start()
    stuck = queue.submit_ingest(str(corpus(tmp_path, "stuck")), [], RunSource.HTTP)
    gate.wait()
    started = time.monotonic()
    queue.shutdown(1.0)
    took = time.monotonic() - started
    gate.release.set()
    assert took < 2.0
    assert queue.get(stuck.id).state == RunState.INTERRUPTED
    assert "before the run reached a safe point" in queue.get(stuck.id).message


def test_a_direct_run_is_recorded_and_a_restart_marks_what_a_kill_left_unfinished(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> None:
    data_dir = tmp_path / "data"
    report = run_ingest(str(corpus(tmp_path, "direct")), data_dir=str(data_dir))
    assert report.documents_ingested == 3

    registry = SqliteRunRegistry.of(data_dir)
    direct = registry.last_finished()
    assert direct is not None and direct.source == RunSource.CLI and direct.state == RunState.COMPLETED
    assert direct.id == direct.prefect_flow_run_id  # the registry and the Prefect UI name it alike
    assert direct.report is not None and report_from(direct.report, IngestReport) == report
    assert [s.name for s in direct.stages][:3] == ["load", "select-changed", "chunk"]
    # a server killed with kill -9 left one run running and one queued
    registry.create(IngestionRun("killed", RunKind.INGEST, RunSource.HTTP, "notes/", state=RunState.RUNNING))
    registry.create(IngestionRun("waiting", RunKind.INGEST, RunSource.PREFECT, "notes/"))
    registry.close()

    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        killed, waiting = runtime.runs.get("killed"), runtime.runs.get("waiting")
    assert killed.state == RunState.INTERRUPTED and "resumes from its phase markers" in killed.message
    assert waiting.state == RunState.INTERRUPTED and "Nothing was written" in waiting.message
