"""``SqliteRunRegistry``: the ingestion and delete runs of a data dir, in ``<data_dir>/runs.sqlite``."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from agrag.components.data_models.ingestion_run import IngestionRun, RunKind, RunState, StageState
from agrag.components.errors import RunNotFoundError, StoreError
from agrag.components.stores.sqlite_file import SqliteFile

RUNS_FILE = "runs.sqlite"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, state TEXT NOT NULL,"
    " finished TEXT NOT NULL, data TEXT NOT NULL)"
)
_FINISHED_INDEX = "CREATE INDEX IF NOT EXISTS runs_finished ON runs (finished)"
_UNFINISHED = (RunState.QUEUED.value, RunState.RUNNING.value)
_RUN = TypeAdapter(IngestionRun)


def utc_now() -> str:
    """The time now as the registry writes it: ISO 8601, UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class SqliteRunRegistry:
    """Every ingestion and delete run of one data dir: what was asked, its state and stages, and its report.

    Each run is one row holding the ``IngestionRun`` as JSON, written whole on every change (a run changes a few
    dozen times), so a reader always gets one consistent version of it. The file opens on first use and survives
    the process: ``status`` shows the last ingestion whoever ran it, and a run a killed process left queued or
    running is marked interrupted by ``mark_unfinished_interrupted`` when the data dir is opened next.

    Usage:
        ```python
        registry = SqliteRunRegistry(Path(".agrag") / RUNS_FILE)
        run = registry.create(IngestionRun("r1", RunKind.INGEST, RunSource.CLI, "docs/"))
        registry.update(replace(run, state=RunState.RUNNING, started=utc_now()))
        registry.last_finished()
        ```
    """

    def __init__(self, path: Path) -> None:
        """Remember where the registry lives; nothing is touched until it is first used."""
        self.path = Path(path)
        # WAL with synchronous=NORMAL: an update survives the process being killed without an fsync per stage.
        pragmas = ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"]
        self._file = SqliteFile(self.path, [*pragmas, _SCHEMA, _FINISHED_INDEX], StoreError, "run registry")

    @classmethod
    def of(cls, data_dir: Path) -> SqliteRunRegistry:
        """The registry of ``data_dir``."""
        return cls(Path(data_dir) / RUNS_FILE)

    def create(self, run: IngestionRun) -> IngestionRun:
        """Record a new run (``created`` is set to now if empty).

        Raises:
            StoreError: a run with this id is recorded already, or the file cannot be written.
        """
        run = run if run.created else replace(run, created=utc_now())
        try:
            with self._file.connection() as db, db:
                db.execute(
                    "INSERT INTO runs (id, state, finished, data) VALUES (?, ?, ?, ?)",
                    (run.id, run.state.value, run.finished, _RUN.dump_json(run).decode()),
                )
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"A run with the id {run.id!r} is recorded already in {self.path}.") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot record the run {run.id!r} in {self.path}: {exc}.") from exc
        return run

    def update(self, run: IngestionRun) -> IngestionRun:
        """Replace the recorded run of ``run.id`` with ``run``.

        Raises:
            RunNotFoundError: no run has this id.
            StoreError: the file cannot be written.
        """
        try:
            with self._file.connection() as db, db:
                changed = db.execute(
                    "UPDATE runs SET state = ?, finished = ?, data = ? WHERE id = ?",
                    (run.state.value, run.finished, _RUN.dump_json(run).decode(), run.id),
                ).rowcount
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot record the run {run.id!r} in {self.path}: {exc}.") from exc
        if not changed:
            raise RunNotFoundError(run.id)
        return run

    def get(self, run_id: str) -> IngestionRun:
        """The run ``run_id``.

        Raises:
            RunNotFoundError: no run has this id.
        """
        found = self._select("WHERE id = ?", (run_id,))
        if not found:
            raise RunNotFoundError(run_id)
        return found[0]

    def recent(self, limit: int = 50) -> list[IngestionRun]:
        """The last ``limit`` runs, newest first."""
        return self._select("ORDER BY seq DESC LIMIT ?", (limit,))

    def unfinished(self) -> list[IngestionRun]:
        """The runs recorded as queued or running, oldest first."""
        return self._select("WHERE state IN (?, ?) ORDER BY seq", _UNFINISHED)

    def last_finished(self) -> IngestionRun | None:
        """The run that ended last, or None if none has."""
        found = self._select("WHERE finished != '' ORDER BY finished DESC, seq DESC LIMIT 1", ())
        return found[0] if found else None

    def mark_unfinished_interrupted(self) -> list[IngestionRun]:
        """Mark every run recorded as queued or running as interrupted, with the stage it was in, and return them.

        Call it when the data dir is opened (its lock held): a run still queued or running then belongs to a process
        that is gone (killed, or stopped before it could record the end), and so does a stage still running.
        """
        marked = []
        for run in self.unfinished():
            if run.state == RunState.RUNNING and run.kind == RunKind.DELETE:
                message = (
                    "Interrupted: the process running it stopped before it ended. Delete the document again to "
                    "complete the delete."
                )
            elif run.state == RunState.RUNNING and run.kind == RunKind.REEXTRACT:
                message = (
                    "Interrupted: the process running it stopped before it ended. Every document it finished stays "
                    "re-extracted; the same re-extraction run again resumes from its phase markers."
                )
            elif run.state == RunState.RUNNING and run.kind == RunKind.FINALIZE:
                message = (
                    "Interrupted: the process running it stopped before it ended. The communities stay stale until "
                    "finalize runs again (`agrag finalize`)."
                )
            elif run.state == RunState.RUNNING:
                message = (
                    "Interrupted: the process running it stopped before it ended. Everything it committed stays; "
                    f"the next ingestion of {run.target} resumes from its phase markers, redoing only unfinished work."
                )
            else:
                message = "Interrupted: the process that queued it stopped before it started. Nothing was written; "
                message += "start it again."
            stages = tuple(
                replace(s, state=StageState.INTERRUPTED) if s.state == StageState.RUNNING else s for s in run.stages
            )
            ended = replace(run, state=RunState.INTERRUPTED, message=message, finished=utc_now(), stages=stages)
            marked.append(self.update(ended))
        return marked

    def close(self) -> None:
        """Close the file (it opens again on the next use)."""
        self._file.close()

    def _select(self, where: str, parameters: Iterable[object]) -> list[IngestionRun]:
        try:
            with self._file.connection() as db:
                rows = db.execute(f"SELECT data FROM runs {where}", tuple(parameters)).fetchall()
            return [_RUN.validate_json(row[0]) for row in rows]
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot read the run registry {self.path}: {exc}.") from exc
        except ValidationError as exc:
            raise StoreError(
                f"The run registry {self.path} holds a run this version of agrag cannot read ({exc.error_count()} "
                "problems). Move the file away; it only keeps the history of runs."
            ) from exc
