"""``IngestControl``: stop an ingestion at a safe point, and follow its stages as they start and end."""

from __future__ import annotations

import threading
from collections.abc import Callable

from agrag.components.data_models.ingestion_run import StageState
from agrag.components.errors import IngestInterruptedError

__all__ = ["IngestControl", "StageObserver", "StageState", "checkpoint"]

StageObserver = Callable[[str, StageState, str], None]
"""Called with (stage name, its state, its one-line result) as a stage starts and ends."""


class IngestControl:
    """What a caller (the server's run registry, a Prefect run) hands to ``ingest_into`` to steer one run.

    ``cancel(reason)`` asks the run to stop; the run calls ``checkpoint()`` at every safe point (between stages,
    between commit batches, between embedding slices and between LLM extraction batches), which then raises
    ``IngestInterruptedError``. What was committed stays, and the phase journal keeps the finished work, so the
    same ingestion started again resumes. ``on_stage`` is called as each stage starts (``running``) and ends
    (``completed`` with the stage's result line, ``skipped`` with why, or ``failed`` with the error); give an
    ``observer`` or override it. Thread-safe: ``cancel`` is meant to be called from another thread.

    Usage:
        ```python
        control = IngestControl(lambda name, state, line: print(name, state.value, line))
        worker = threading.Thread(target=ingest_into, args=(folder, config, store, embedder),
                                  kwargs={"control": control})
        worker.start()
        control.cancel("the server is shutting down")  # the run raises IngestInterruptedError at its next checkpoint
        ```
    """

    def __init__(self, observer: StageObserver | None = None) -> None:
        """Follow the run's stages with ``observer`` (None: nobody is told)."""
        self._observer = observer
        self._reason: str | None = None
        self._lock = threading.Lock()
        self._to_commit: int | None = None
        self._committed = 0

    def cancel(self, reason: str = "cancelled") -> None:
        """Ask the run to stop at its next checkpoint; ``reason`` goes into the error (the first reason stays)."""
        with self._lock:
            if self._reason is None:
                self._reason = reason

    def interrupt(self, reason: str) -> None:
        """``cancel`` from a signal handler: it takes no lock, since the handler may run while this thread holds it.

        One attribute assignment is atomic; at worst a ``cancel`` from another thread at the same moment wins.
        """
        if self._reason is None:
            self._reason = reason

    def to_commit(self, documents: int) -> None:
        """The run has this many new or changed documents to commit (none committed yet)."""
        self._to_commit, self._committed = documents, 0

    def committed(self, documents: int) -> None:
        """A commit batch of this many documents was committed."""
        self._committed += documents

    @property
    def commits(self) -> tuple[int, int] | None:
        """``(committed, to commit)`` once the run said how many it commits, else None (read without a lock)."""
        return None if self._to_commit is None else (self._committed, self._to_commit)

    @property
    def cancelled(self) -> bool:
        """True once ``cancel`` was called."""
        with self._lock:
            return self._reason is not None

    @property
    def reason(self) -> str | None:
        """Why the run was asked to stop, or None."""
        with self._lock:
            return self._reason

    def checkpoint(self) -> None:
        """Return at once, unless the run was asked to stop.

        Raises:
            IngestInterruptedError: ``cancel`` was called.
        """
        reason = self.reason
        if reason is not None:
            raise IngestInterruptedError(reason, self.commits)

    def on_stage(self, name: str, state: StageState, line: str = "") -> None:
        """A stage started or ended: tell the observer."""
        if self._observer is not None:
            self._observer(name, state, line)


def checkpoint(control: IngestControl | None) -> None:
    """``control.checkpoint()``, for code whose control is optional.

    Raises:
        IngestInterruptedError: the run was asked to stop.
    """
    if control is not None:
        control.checkpoint()
