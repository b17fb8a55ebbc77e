"""Progress of a run: bars for the long stages in a terminal (tqdm), one line per stage elsewhere.

Prefect's task states show the rest. Through a pipe or into a log file a bar prints nothing useful, and a long run
would print no line at all until its end; ``stage_lines`` makes every stage print a line as it starts and ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TextIO

from tqdm import tqdm

from agrag.components.data_models.ingestion_run import StageState
from agrag.components.safe_text import printable

_STAGE_STREAM: ContextVar[TextIO | None] = ContextVar("agrag_stage_stream", default=None)


@contextmanager
def progress_bar(enabled: bool, total: int, what: str, unit: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar for a long stage, or None when bars are off."""
    if not enabled or total == 0:
        yield None
        return
    with tqdm(total=total, desc=what, unit=unit, leave=False) as bar:
        yield bar.update


@contextmanager
def stage_lines(stream: TextIO | None) -> Iterator[None]:
    """While the block runs, each stage of a run in this context prints one line to ``stream`` (None: no lines).

    Usage:
        ```python
        with stage_lines(None if sys.stderr.isatty() else sys.stderr):
            run_ingest(folder)  # "12:00:01 embed started", "12:00:09 embed: 120 chunks embedded (8.0 s)"
        ```
    """
    token = _STAGE_STREAM.set(stream)
    try:
        yield
    finally:
        _STAGE_STREAM.reset(token)


def announce_stage(name: str, state: StageState, line: str, seconds: float | None = None) -> None:
    """Print a stage's start or end on the stream of ``stage_lines``, if one is set."""
    stream = _STAGE_STREAM.get()
    if stream is None:
        return
    took = f" ({seconds:.1f} s)" if seconds is not None and state != StageState.RUNNING else ""
    if state == StageState.RUNNING:
        text = f"{name} started"
    elif state == StageState.SKIPPED:
        text = f"{name}: skipped, {line}"
    elif state == StageState.FAILED:
        text = f"{name} failed: {line}{took}"
    else:
        text = f"{name}: {line or 'done'}{took}"
    stream.write(f"{time.strftime('%H:%M:%S')} {printable(text, multiline=False)}\n")
    stream.flush()
