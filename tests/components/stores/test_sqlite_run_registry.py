from dataclasses import replace
from pathlib import Path

import pytest

from agrag.components.data_models.ingestion_run import (
    IngestionRun,
    RunKind,
    RunSource,
    RunState,
    StageState,
    StageStatus,
)
from agrag.components.errors import RunNotFoundError, StoreError
from agrag.components.stores.sqlite_run_registry import RUNS_FILE, SqliteRunRegistry


def run(run_id: str, state: RunState = RunState.QUEUED, kind: RunKind = RunKind.INGEST) -> IngestionRun:
    return IngestionRun(run_id, kind, RunSource.HTTP, "notes/" if kind == RunKind.INGEST else "d1", ("a=1",), state)


def test_a_run_is_recorded_whole_and_read_back(tmp_path: Path) -> None:
    registry = SqliteRunRegistry.of(tmp_path)
    created = registry.create(run("r1"))
    assert created.created.endswith("Z")
    stages = (StageStatus("load", StageState.COMPLETED, 0.5, "3 files read, 0 failed"),)
    report: dict[str, object] = {"folder": "notes/", "counts": {"Chunk": 4}}
    done = replace(created, state=RunState.COMPLETED, stages=stages, report=report, finished="2026-11-30T10:00:00Z")
    registry.update(done)
    registry.close()

    reopened = SqliteRunRegistry(tmp_path / RUNS_FILE)
    assert reopened.get("r1") == done
    assert reopened.last_finished() == done


def test_runs_list_newest_first_and_the_last_finished_is_the_one_that_ended_last(tmp_path: Path) -> None:
    registry = SqliteRunRegistry.of(tmp_path)
    for name in ("r1", "r2", "r3"):
        registry.create(run(name))
    assert [r.id for r in registry.recent()] == ["r3", "r2", "r1"]
    assert [r.id for r in registry.recent(limit=2)] == ["r3", "r2"]
    assert registry.last_finished() is None
    registry.update(replace(registry.get("r3"), state=RunState.FAILED, finished="2026-11-30T10:00:00Z"))
    registry.update(replace(registry.get("r1"), state=RunState.COMPLETED, finished="2026-11-30T10:05:00Z"))
    last = registry.last_finished()
    assert last is not None and last.id == "r1"


def test_unknown_and_duplicate_ids_are_refused(tmp_path: Path) -> None:
    registry = SqliteRunRegistry.of(tmp_path)
    with pytest.raises(RunNotFoundError, match="'nope'") as missing:
        registry.get("nope")
    assert isinstance(missing.value, LookupError)
    with pytest.raises(RunNotFoundError):
        registry.update(run("nope"))
    registry.create(run("r1"))
    with pytest.raises(StoreError, match="recorded already"):
        registry.create(run("r1"))


def test_runs_a_killed_process_left_unfinished_are_marked_interrupted(tmp_path: Path) -> None:
    registry = SqliteRunRegistry.of(tmp_path)
    registry.create(run("running", RunState.RUNNING))
    registry.create(run("queued"))
    registry.create(run("deleting", RunState.RUNNING, RunKind.DELETE))
    registry.create(run("done", RunState.COMPLETED))

    marked = {r.id: r for r in registry.mark_unfinished_interrupted()}

    assert set(marked) == {"running", "queued", "deleting"}
    assert all(r.state == RunState.INTERRUPTED and r.finished for r in marked.values())
    assert "the next ingestion of notes/ resumes from its phase markers" in marked["running"].message
    assert "Nothing was written" in marked["queued"].message
    assert "Delete the document again" in marked["deleting"].message
    assert registry.get("done").state == RunState.COMPLETED
    assert registry.mark_unfinished_interrupted() == []
