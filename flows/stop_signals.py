"""SIGTERM and Ctrl+C (SIGINT) of a command that runs an ingestion in-process: a stop at a safe point, one line.

Left to the defaults, SIGINT raised ``KeyboardInterrupt`` wherever the run was, and SIGTERM met Prefect's flow
engine, which crashes the run and kills the process with the signal again: no summary, and when the whole process
group was signalled (a terminal's Ctrl+C, ``timeout``, a supervisor) tracebacks of Prefect's workers. Instead the
command arms ``stopping_on_signals`` and the flow, in the same main thread, hands its run to ``run_stops``:

* during a run, the first SIGTERM or SIGINT asks it to stop at its next safe point (between stages, commit batches,
  embedding slices and LLM batches); the run then ends with ``IngestInterruptedError``, which counts the documents
  it committed. A second signal stops it at once with ``CommandInterrupted`` (a kill -9 loses no more).
* outside a run (Prefect starting, the input being checked), a signal stops the command at once.

Either way the command prints one line (``interrupted_line``): what was committed, that the run was interrupted,
and that the same command resumes. Handlers take no lock and write nothing but a flag and one ``os.write``: a
handler runs in the main thread between two bytecodes, possibly while that thread holds any lock.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

from agrag.components.errors import IngestInterruptedError

if TYPE_CHECKING:
    from agrag.flows.run_context import RunContext

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class CommandInterrupted(BaseException):
    """A signal stopped the command at once (outside a run, or a second signal during one).

    A ``BaseException`` like ``KeyboardInterrupt``, so no ``except Exception`` on the way (a loader's guard around
    one file, a library's retry) mistakes it for a failure and goes on.

    Attributes:
        signum: The signal.
        commits: ``(committed, to commit)`` of the run it stopped, if one had counted them.
        during_run: Whether a run had started.
    """

    def __init__(self, signum: int, commits: tuple[int, int] | None, during_run: bool) -> None:
        self.signum, self.commits, self.during_run = signum, commits, during_run
        super().__init__(f"{signal.Signals(signum).name} received twice" if during_run else "stopped before the run")


@dataclass
class _Armed:
    """The command's stop state: the first signal received, and the run it stops (while one runs)."""

    signum: int | None = None
    run: RunContext | None = None
    asked: bool = False
    previous: dict[int, Any] = field(default_factory=dict)

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        run = self.run
        if run is not None and not self.asked:
            self.asked = True
            name = signal.Signals(signum).name
            run.interrupt(f"{name} received")
            os.write(2, f"Stopping at the next safe point ({name}); send it again to stop at once.\n".encode())
            return
        raise CommandInterrupted(signum, run.control.commits if run is not None else None, run is not None)


_ARMED: list[_Armed] = []  # the command's state while ``stopping_on_signals`` is active (main thread only)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def stopping_on_signals() -> Iterator[None]:
    """For a command's block (main thread): SIGTERM and SIGINT stop it as the module says; then the old handlers.

    Elsewhere than in the main thread (a test's worker) nothing is installed.
    """
    if not _main_thread() or _ARMED:
        yield
        return
    armed = _Armed()
    armed.previous = {sig: signal.signal(sig, armed.handle) for sig in STOP_SIGNALS}
    _ARMED.append(armed)
    try:
        yield
    finally:
        _ARMED.remove(armed)
        for sig, handler in armed.previous.items():
            signal.signal(sig, handler)


@contextmanager
def run_stops(context: RunContext) -> Iterator[None]:
    """While ``context`` runs, a signal asks it to stop at its next safe point (if a command armed the signals).

    Prefect's flow engine installs its own SIGTERM handler for a flow run; this puts the command's handler back for
    the run and Prefect's after it.
    """
    if not _ARMED or not _main_thread():
        yield
        return
    armed = _ARMED[-1]
    replaced = {sig: signal.signal(sig, armed.handle) for sig in STOP_SIGNALS}
    armed.run, armed.asked = context, False
    try:
        yield
    finally:
        armed.run = None
        for sig, handler in replaced.items():
            signal.signal(sig, handler)


def received() -> int | None:
    """The first stop signal the armed command received, or None."""
    return _ARMED[-1].signum if _ARMED else None


def interrupted_line(error: IngestInterruptedError | CommandInterrupted, signum: int | None) -> str:
    """The one line a command prints when a signal (or a cancel) stopped its ingestion."""
    name = signal.Signals(signum).name if signum is not None else "cancelled"
    if isinstance(error, CommandInterrupted) and not error.during_run:
        return f"Interrupted ({name}) before the ingestion started; nothing was written. Run the same command again."
    how = "stopped at once" if isinstance(error, CommandInterrupted) else "stopped at a safe point"
    if error.commits is None:
        committed = "; what it committed stays"
    elif error.commits[0] == 0:
        committed = f" before committing any of its {error.commits[1]:,} new or changed documents"
    else:
        done, total = error.commits
        committed = f" with {done:,} of {total:,} new or changed documents committed; they stay"
    return (
        f"Interrupted ({name}): the ingestion {how}{committed}. Run the same command again to resume: it redoes "
        "only unfinished work."
    )
