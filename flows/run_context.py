"""``RunContext``: the run an ingestion or delete flow is part of, its record in the run registry, and its control.

Whoever starts a flow that writes a data dir makes a ``RunContext`` current (``running``) in the thread that runs the
flow: the server's ingestion queue for the runs it executes, or the flow itself (``tracked_run``) when it is called
directly (``agrag ingest`` in-process, a run of ``agrag serve-ingest``). The flow body then finds it with
``current_run()``: its ``control`` goes to ``ingest_into``, and every stage start and end is recorded in the registry
and logged to the Prefect run, in the wording of the CLI's stage table.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path

from prefect import get_run_logger
from prefect.context import FlowRunContext, TaskRunContext

from agrag.components.data_models.ingestion_run import (
    IngestionRun,
    RunKind,
    RunSource,
    RunState,
    StageState,
    StageStatus,
)
from agrag.components.errors import RunNotFoundError
from agrag.components.stores.sqlite_run_registry import SqliteRunRegistry, utc_now
from agrag.flows import stop_signals
from agrag.flows.ingest_control import IngestControl

_CURRENT: ContextVar[RunContext | None] = ContextVar("agrag_run_context", default=None)


class RunContext:
    """One run's record, kept up to date in the registry, and the ``IngestControl`` that steers it.

    Thread-safe: the thread running the flow records stages, another thread may ``stop`` the run.

    Usage:
        ```python
        context = RunContext.create(runtime.runs, IngestionRun(new_run_id(), RunKind.INGEST, RunSource.HTTP, folder))
        with running(context):
            context.start()
            report = ingest_into(folder, config, store, embedder, control=context.control)
        ```
    """

    def __init__(self, registry: SqliteRunRegistry, run: IngestionRun, served_data_dir: Path | None = None) -> None:
        """Keep ``run`` (recorded already) up to date in ``registry``.

        Args:
            registry: The run registry of the data dir.
            run: The run as recorded.
            served_data_dir: The data dir of the server that executes the run, if a server does.
        """
        self._registry = registry
        self._run = run
        self.served_data_dir = served_data_dir
        self.control = IngestControl(self._on_stage)
        self._lock = threading.RLock()
        self._stage_started: dict[str, float] = {}
        self._stop_state: RunState | None = None

    @classmethod
    def create(cls, registry: SqliteRunRegistry, run: IngestionRun, served_data_dir: Path | None = None) -> RunContext:
        """Record ``run`` in ``registry`` and keep it up to date there."""
        return cls(registry, registry.create(run), served_data_dir)

    @property
    def run(self) -> IngestionRun:
        """The run as recorded now."""
        with self._lock:
            return self._run

    @property
    def source(self) -> RunSource:
        """Who started the run."""
        return self._run.source

    @property
    def stop_state(self) -> RunState | None:
        """``cancelled`` or ``interrupted`` once ``stop`` was called, else None."""
        with self._lock:
            return self._stop_state

    def update(self, **changes: object) -> IngestionRun:
        """Change fields of the run and record it."""
        with self._lock:
            self._run = self._registry.update(replace(self._run, **changes))  # type: ignore[arg-type]
            return self._run

    def start(self) -> IngestionRun:
        """The run starts now."""
        return self.update(state=RunState.RUNNING, started=utc_now(), queued_behind=(), message="Running.")

    def stop(self, state: RunState, reason: str) -> IngestionRun:
        """Ask the run to stop at its next safe point; it then ends ``state`` (cancelled or interrupted).

        The first stop asked for stays (a shutdown after a cancel still ends the run cancelled).
        """
        with self._lock:
            if self._stop_state is not None or self._run.state.final:
                return self._run
            self._stop_state = state
            self.control.cancel(reason)
            return self.update(message=f"Stopping ({reason}): it stops at its next safe point.")

    def interrupt(self, reason: str) -> None:
        """``stop(INTERRUPTED, reason)`` from a signal handler: no lock and no registry write (``finish`` records it).

        A handler runs in the thread that may hold this context's lock, in the middle of a registry write.
        """
        if self._stop_state is None:
            self._stop_state = RunState.INTERRUPTED
        self.control.interrupt(reason)

    def finish(
        self, state: RunState, message: str, report: dict[str, object] | None = None, error: str = ""
    ) -> IngestionRun:
        """The run ended ``state`` (``error``: the kind of error that ended it); a running stage did not finish.

        That stage ends interrupted when the run was (a server shutting down), else failed.
        """
        stopped = StageState.INTERRUPTED if state == RunState.INTERRUPTED else StageState.FAILED
        with self._lock:
            if self._run.state.final:
                return self._run
            stages = tuple(
                replace(s, state=stopped, seconds=self._seconds(s.name, s.seconds))
                if s.state == StageState.RUNNING
                else s
                for s in self._run.stages
            )
            return self.update(
                state=state, message=message, report=report, finished=utc_now(), stages=stages, error=error
            )

    def _on_stage(self, name: str, state: StageState, line: str) -> None:
        with self._lock:
            if state == StageState.RUNNING:
                self._stage_started[name] = time.monotonic()
            stage = StageStatus(name, state, self._seconds(name, 0.0), line)
            stages = [s for s in self._run.stages if s.name != name]
            before = next((i for i, s in enumerate(self._run.stages) if s.name == name), len(stages))
            stages.insert(before, stage)
            self.update(stages=tuple(stages))
        log_stage(name, state, line)

    def _seconds(self, name: str, otherwise: float) -> float:
        started = self._stage_started.get(name)
        return otherwise if started is None else round(time.monotonic() - started, 3)


def log_stage(name: str, state: StageState, line: str) -> None:
    """Log a stage's start or result to the Prefect run in progress (nothing outside a run)."""
    if FlowRunContext.get() is None and TaskRunContext.get() is None:
        return
    logger = get_run_logger()
    if state == StageState.COMPLETED:
        logger.info("%s: %s", name, line or "done")
    elif state == StageState.SKIPPED:
        logger.info("%s: skipped, %s", name, line)
    elif state == StageState.FAILED:
        logger.warning("%s failed: %s", name, line)
    else:
        logger.debug("%s started", name)


def current_run() -> RunContext | None:
    """The run context of the flow running in this thread, if one is current."""
    return _CURRENT.get()


@contextmanager
def running(context: RunContext) -> Iterator[RunContext]:
    """Make ``context`` current in this thread (and in flows and tasks it runs) until the block ends."""
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)


def new_run_id() -> str:
    """A fresh run id."""
    return uuid.uuid4().hex


def unused_run_id(registry: SqliteRunRegistry, preferred: str = "") -> str:
    """``preferred`` (a Prefect flow run id) unless the registry has it already (a retried run), else a fresh id."""
    if preferred:
        try:
            registry.get(preferred)
        except RunNotFoundError:
            return preferred
    return new_run_id()


def requester() -> RunSource:
    """Who asked for the flow running now, so that messages name the fields that person filled in.

    The current run's source; else the Prefect form, in a run of a deployment; else the CLI (or Python).
    """
    context = current_run()
    if context is not None:
        return context.source
    flow_run = FlowRunContext.get()
    if flow_run is not None and flow_run.flow_run is not None and flow_run.flow_run.deployment_id is not None:
        return RunSource.PREFECT
    return RunSource.CLI


@contextmanager
def tracked_run(
    registry: SqliteRunRegistry, kind: RunKind, target: str, overrides: Sequence[str]
) -> Iterator[RunContext]:
    """The current run context; without one, a new run recorded as running in ``registry`` for the block.

    A run of its own ends failed when the block raises (the flow records its other outcomes itself), and carries the
    Prefect flow run's id, so the registry and the Prefect UI name it alike.
    """
    context = current_run()
    if context is not None:
        flow_run = FlowRunContext.get()
        if flow_run is not None and flow_run.flow_run is not None and not context.run.prefect_flow_run_id:
            context.update(prefect_flow_run_id=str(flow_run.flow_run.id))
        yield context
        return
    flow_run = FlowRunContext.get()
    prefect_id = str(flow_run.flow_run.id) if flow_run is not None and flow_run.flow_run is not None else ""
    run = IngestionRun(
        id=unused_run_id(registry, prefect_id),
        kind=kind,
        source=requester(),
        target=target,
        overrides=tuple(overrides),
        state=RunState.RUNNING,
        message="Running.",
        started=utc_now(),
        prefect_flow_run_id=prefect_id,
    )
    context = RunContext.create(registry, run)
    with running(context), stop_signals.run_stops(context):
        try:
            yield context
        except stop_signals.CommandInterrupted as exc:  # a second SIGTERM or Ctrl+C: stopped at once
            context.finish(RunState.INTERRUPTED, stop_signals.interrupted_line(exc, exc.signum))
            raise
        except BaseException as exc:
            context.finish(RunState.FAILED, str(exc) or type(exc).__name__, error=type(exc).__name__)
            raise
