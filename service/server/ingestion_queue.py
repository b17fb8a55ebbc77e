"""``IngestionQueue``: the one writer of a served data dir. Its runs (ingest, delete, re-extract, finalize) go in order.

Runs come from the HTTP API (and the CLI as its client) and from the Prefect deployment ``agrag serve`` serves; each
is recorded in the data dir's run registry the moment it is asked for, and one worker thread executes them as the
real Prefect flows (``ingest_flow``, ``delete_flow``, ``reextract_flow``, ``finalize_flow``, or ``run_flow`` for a
deployment run) with the served runtime. The worker makes the run's ``RunContext`` current, so the flow finds its
``IngestControl`` (to stop at a safe point) and records each stage as it starts and ends.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

from prefect.client.schemas.objects import State
from prefect.exceptions import Abort
from prefect.settings import PREFECT_API_URL, temporary_settings

from agrag.components.data_models.ingestion_run import IngestionRun, RunKind, RunSource, RunState
from agrag.components.stores.sqlite_run_registry import SqliteRunRegistry
from agrag.flows.delete_flow import delete_flow
from agrag.flows.finalize_run import FINALIZE_TARGET, finalize_flow
from agrag.flows.ingest_flow import ingest_flow
from agrag.flows.reextract_flow import OTHER_SETTINGS_TARGET, reextract_flow
from agrag.flows.run_context import RunContext, new_run_id, running
from agrag.flows.run_outcome import run_state
from agrag.pipelines.runtime import Runtime
from agrag.service.api.errors import NotReadyError
from agrag.service.server.private_prefect import PrivatePrefectServer

logger = logging.getLogger(__name__)

Execute = Callable[[], State[Any]]
"""Runs a job's flow in the worker thread and returns its final state."""

SHUTDOWN_REASON = "the server is shutting down"
NOT_STARTED_AT_SHUTDOWN = (
    "Interrupted: the server stopped before this run started; nothing was written. Start it again when the server is "
    "back."
)


class Feeder(Protocol):
    """Something that submits runs to the queue on its own (the Prefect deployment's poller)."""

    def start(self) -> None:
        """Begin submitting runs."""
        ...

    def stop(self, timeout_seconds: float) -> None:
        """Stop submitting runs (within ``timeout_seconds``)."""
        ...


@dataclass
class _Job:
    context: RunContext
    execute: Execute
    on_dropped: Callable[[RunState, str], None] | None = None  # removed before it ran (cancelled, shutdown)
    on_finished: Callable[[State[Any] | None], None] | None = None  # after it ran, in the worker thread

    @property
    def id(self) -> str:
        return self.context.run.id


class IngestionQueue:
    """Runs the write jobs of one served data dir one at a time, in the order they were asked for.

    ``submit_*`` return at once with the run as recorded; its message says whether it runs now or which runs it
    waits for. ``cancel`` removes a queued run, or stops a running one at its next safe point. ``shutdown`` stops
    the running run at its next safe point (after the batch it is writing) and records the queued ones as
    interrupted: they are not run again by the next start (a run someone asked for long ago must not start by
    surprise); the run's record says to start it again.

    Without a Prefect API (``PREFECT_API_URL`` unset), give a ``PrivatePrefectServer``: the worker starts it before
    the first run and runs every flow against it.

    Usage:
        ```python
        queue = IngestionQueue(runtime, runtime.runs)
        queue.start()
        run = queue.submit_ingest("docs/", [], RunSource.HTTP)   # run.message: "Starts now." or whom it waits for
        queue.shutdown(30)
        ```
    """

    def __init__(
        self,
        runtime: Runtime,
        registry: SqliteRunRegistry | None = None,
        *,
        private_prefect: PrivatePrefectServer | None = None,
    ) -> None:
        """Queue runs for ``runtime``'s data dir, recorded in ``registry`` (by default the runtime's)."""
        self._runtime = runtime
        self._registry = registry or runtime.runs
        self._private_prefect = private_prefect
        self._feeders: list[Feeder] = []
        self._queue: deque[_Job] = deque()
        self._running: _Job | None = None
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._worker: threading.Thread | None = None

    @property
    def registry(self) -> SqliteRunRegistry:
        """Where the runs are recorded."""
        return self._registry

    @property
    def data_dir_text(self) -> str:
        """The served data dir, as flows take it."""
        return str(self._runtime.data_dir)

    def add_feeder(self, feeder: Feeder) -> None:
        """Start ``feeder`` with the queue and stop it first on shutdown."""
        self._feeders.append(feeder)

    def start(self) -> None:
        """Start the worker thread, then the feeders."""
        if self._worker is not None:
            return
        # the worker sees this thread's Prefect settings (a test harness sets them in a context variable)
        context = contextvars.copy_context()
        self._worker = threading.Thread(target=context.run, args=(self._work,), name="agrag-ingestion", daemon=True)
        self._worker.start()
        for feeder in self._feeders:
            feeder.start()

    def submit_ingest(
        self, folder: str, overrides: Sequence[str], source: RunSource, files: Sequence[str] = ()
    ) -> IngestionRun:
        """Queue an ingestion of ``folder`` (only ``files`` of it, if given); the run's message says when it runs."""
        run = IngestionRun(new_run_id(), RunKind.INGEST, source, folder, tuple(overrides))
        chosen = list(files) or None

        def execute() -> State[Any]:
            final = ingest_flow(folder, list(overrides), data_dir=self.data_dir_text, files=chosen, return_state=True)
            return cast(State[Any], final)

        return self.enqueue(run, execute)

    def submit_delete(self, document_id: str, overrides: Sequence[str], source: RunSource) -> IngestionRun:
        """Queue the deletion of ``document_id``; the run's message says when it runs."""
        run = IngestionRun(new_run_id(), RunKind.DELETE, source, document_id, tuple(overrides))

        def execute() -> State[Any]:
            final = delete_flow(document_id, list(overrides), self.data_dir_text, return_state=True)
            return cast(State[Any], final)

        return self.enqueue(run, execute)

    def submit_reextract(
        self,
        document_ids: Sequence[str],
        overrides: Sequence[str],
        source: RunSource,
        *,
        other_settings: bool = False,
        force: bool = False,
    ) -> IngestionRun:
        """Queue a re-extraction of ``document_ids`` (or all under other settings); see ``reextract_flow``."""
        ids = list(document_ids)
        target = ", ".join(ids) if ids else OTHER_SETTINGS_TARGET
        run = IngestionRun(new_run_id(), RunKind.REEXTRACT, source, target, tuple(overrides))

        def execute() -> State[Any]:
            final = reextract_flow(
                ids or None, list(overrides), other_settings, force, data_dir=self.data_dir_text, return_state=True
            )
            return cast(State[Any], final)

        return self.enqueue(run, execute)

    def submit_finalize(self, overrides: Sequence[str], source: RunSource) -> IngestionRun:
        """Queue a rebuild of the stale communities and reports; see ``finalize_flow``."""
        run = IngestionRun(new_run_id(), RunKind.FINALIZE, source, FINALIZE_TARGET, tuple(overrides))

        def execute() -> State[Any]:
            final = finalize_flow(list(overrides), data_dir=self.data_dir_text, return_state=True)
            return cast(State[Any], final)

        return self.enqueue(run, execute)

    def enqueue(
        self,
        run: IngestionRun,
        execute: Execute,
        *,
        on_dropped: Callable[[RunState, str], None] | None = None,
        on_finished: Callable[[State[Any] | None], None] | None = None,
    ) -> IngestionRun:
        """Record ``run`` as queued and run ``execute`` after the runs before it.

        Args:
            run: The run to record (state queued).
            execute: Runs the flow in the worker thread; returns the flow's final state.
            on_dropped: Called with the state and message if the run is removed before it starts.
            on_finished: Called in the worker thread after ``execute`` with its state (None if it raised).

        Raises:
            NotReadyError: the queue is shutting down.
        """
        with self._cond:
            if self._stopping.is_set():
                raise NotReadyError("The server is shutting down and takes no new runs; start the run again later.")
            ahead = self._ahead_runs()
            queued = replace(
                run, state=RunState.QUEUED, queued_behind=tuple(r.id for r in ahead), message=waiting_message(ahead)
            )
            context = RunContext.create(self._registry, queued, self._runtime.data_dir)
            self._queue.append(_Job(context, execute, on_dropped, on_finished))
            self._cond.notify_all()
            return context.run

    def pending(self) -> list[IngestionRun]:
        """The running run (first) and the queued ones, in the order they will run."""
        with self._cond:
            return self._ahead_runs()

    def get(self, run_id: str) -> IngestionRun:
        """One run, as recorded.

        Raises:
            RunNotFoundError: no run has this id.
        """
        return self._registry.get(run_id)

    def runs(self, limit: int = 50) -> list[IngestionRun]:
        """The last ``limit`` runs, newest first."""
        return self._registry.recent(limit)

    def last_finished(self) -> IngestionRun | None:
        """The run that ended last (whoever ran it: this server, or an earlier ``agrag ingest``)."""
        return self._registry.last_finished()

    def cancel(self, run_id: str, reason: str = "cancelled through the API") -> IngestionRun:
        """Cancel a queued run (it never starts), or stop a running one at its next safe point.

        A finished run is returned as it is. A running delete cannot stop half-way; it ends in a moment.

        Raises:
            RunNotFoundError: no run has this id.
        """
        with self._cond:
            job = next((j for j in self._queue if j.id == run_id), None)
            if job is not None:
                self._queue.remove(job)
                self._announce()
            running = self._running if self._running is not None and self._running.id == run_id else None
        if job is not None:
            self._drop(job, RunState.CANCELLED, f"Cancelled before it started ({reason}); nothing was written.")
            return job.context.run
        if running is not None:
            if running.context.run.kind == RunKind.DELETE:
                return running.context.update(message="Running: a delete cannot stop half-way; it ends in a moment.")
            return running.context.stop(RunState.CANCELLED, reason)
        return self._registry.get(run_id)

    def shutdown(self, timeout_seconds: float) -> None:
        """Stop: no new runs; the running run stops at its next safe point; queued runs are recorded interrupted.

        Returns within ``timeout_seconds`` even if the running run has not reached a safe point by then (its record
        then says so; what it committed stays, and the next run resumes from the phase markers).
        """
        deadline = time.monotonic() + timeout_seconds
        with self._cond:
            self._stopping.set()
            dropped = list(self._queue)
            self._queue.clear()
            running = self._running
            self._cond.notify_all()
        if running is not None:
            running.context.stop(RunState.INTERRUPTED, SHUTDOWN_REASON)
        for job in dropped:
            self._drop(job, RunState.INTERRUPTED, NOT_STARTED_AT_SHUTDOWN)
        for feeder in self._feeders:
            feeder.stop(max(0.0, min(5.0, deadline - time.monotonic())))
        if self._worker is not None:
            self._worker.join(max(0.0, deadline - time.monotonic()))
            if self._worker.is_alive() and running is not None:
                logger.warning("Run %s did not reach a safe point in time; stopping anyway", running.id)
                running.context.finish(
                    RunState.INTERRUPTED,
                    f"Interrupted: the server stopped before the run reached a safe point (it waited "
                    f"{timeout_seconds:.0f} s). What it committed stays; the next run of {running.context.run.target} "
                    "resumes from its phase markers.",
                )
        if self._private_prefect is not None:
            self._private_prefect.stop(timeout=max(0.5, min(5.0, deadline - time.monotonic())))

    def _ahead_runs(self) -> list[IngestionRun]:
        jobs = ([self._running] if self._running is not None else []) + list(self._queue)
        # a run recorded final is only being closed in Prefect: a client that saw it end is not told to wait for it
        return [run for run in (j.context.run for j in jobs) if not run.state.final]

    def _announce(self) -> None:
        """Tell each queued run which runs it now waits for (call with the lock held)."""
        ahead = [self._running.context.run] if self._running is not None else []
        for job in self._queue:
            behind = tuple(r.id for r in ahead)
            if job.context.run.queued_behind != behind:
                job.context.update(queued_behind=behind, message=waiting_message(ahead))
            ahead.append(job.context.run)

    def _drop(self, job: _Job, state: RunState, message: str) -> None:
        job.context.finish(state, message)
        if job.on_dropped is not None:
            try:
                job.on_dropped(state, message)
            except Exception:  # the record is right; only the origin (Prefect) may show it late
                logger.exception("Could not tell the origin of run %s that it was dropped", job.id)

    def _work(self) -> None:
        with ExitStack() as prefect_api:
            while True:
                with self._cond:
                    while not self._queue and not self._stopping.is_set():
                        self._cond.wait()
                    if self._stopping.is_set():
                        return
                    job = self._queue.popleft()
                    self._running = job
                    self._announce()
                try:
                    if self._private_prefect is not None and not self._private_prefect.url:
                        url = self._private_prefect.start(self._stopping)
                        prefect_api.enter_context(temporary_settings(updates={PREFECT_API_URL: url}))
                    self._execute(job)
                except Exception as exc:  # the private Prefect server did not start: this run cannot run
                    logger.exception("Run %s could not be executed", job.id)
                    job.context.finish(RunState.FAILED, f"The run could not be executed: {exc}")
                finally:
                    with self._cond:
                        self._running = None
                        self._cond.notify_all()

    def _execute(self, job: _Job) -> None:
        context = job.context
        if context.stop_state is not None:  # stopped between leaving the queue and starting
            context.finish(context.stop_state, NOT_STARTED_AT_SHUTDOWN)
            return
        context.start()
        state: State[Any] | None = None
        started = time.monotonic()
        try:
            with running(context):
                state = job.execute()
        except Abort as exc:  # Prefect refused to run it (e.g. cancelled in the UI a moment before it started)
            context.finish(RunState.CANCELLED, f"Prefect did not let the run start: {exc}")
        except Exception as exc:  # a bug: the worker must outlive it
            logger.exception("Run %s failed", job.id)
            context.finish(RunState.FAILED, f"The run failed unexpectedly ({type(exc).__name__}: {exc}); see the log.")
        finally:
            if not context.run.state.final:  # the flow never recorded an end (refused before its body ran)
                if state is not None and state.is_final():
                    context.finish(run_state(state), state.message or state.name or "")
                else:
                    context.finish(RunState.FAILED, "The run ended without a final state; see the server's log.")
            if job.on_finished is not None:
                try:
                    job.on_finished(state)
                except Exception:
                    logger.exception("Could not end run %s at its origin", job.id)
            run = context.run
            logger.info(
                "Run %s (%s of %s) ended %s in %.1f s: %s",
                run.id,
                run.kind.value,
                run.target,
                run.state.value,
                time.monotonic() - started,
                run.message,
            )


def waiting_message(ahead: Sequence[IngestionRun]) -> str:
    """What a run that was just queued behind ``ahead`` is told."""
    if not ahead:
        return "Starts now: no other run is queued or running."
    named = ", ".join(f"{r.id} ({r.kind.value} of {r.target}, {r.state.value})" for r in ahead[:5])
    more = f" and {len(ahead) - 5} more" if len(ahead) > 5 else ""
    runs = "run" if len(ahead) == 1 else f"{len(ahead)} runs"
    return f"Queued behind {runs}: {named}{more}. The data dir has one writer; this run starts when they have finished."
