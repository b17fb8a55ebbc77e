"""``StageClock``: times the stages of one ingestion and tells the run's control as each starts and ends."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

from prefect.utilities.annotations import quote

from agrag.components.data_models.ingestion_run import StageState
from agrag.flows.ingest_control import IngestControl, checkpoint
from agrag.flows.ingest_report import IngestReport, stage_lines
from agrag.flows.progress import announce_stage

T = TypeVar("T")


def as_is(value: T) -> T:
    """Hand ``value`` to a task without Prefect walking every element (30 s for 10k vectors otherwise)."""
    return cast(T, quote(value))


class StageClock:
    """Times the stages; with a control, checks it before each stage and tells it as each stage starts and ends."""

    def __init__(self, control: IngestControl | None = None) -> None:
        self.seconds: dict[str, float] = {}
        self.control = control

    def run(self, name: str, stage: Callable[[], T]) -> T:
        """Run one stage (after a checkpoint) and time it; a stage that raises is told as failed."""
        checkpoint(self.control)
        self._tell(name, StageState.RUNNING)
        started = time.perf_counter()
        try:
            return stage()
        except BaseException as exc:
            self._tell(name, StageState.FAILED, str(exc) or type(exc).__name__)
            raise
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started

    def completed(self, name: str, report: IngestReport, *, final: bool = True) -> None:
        """The stage ended: its line, worded as the CLI's stage table words it, from what ``report`` knows now."""
        self._tell(name, StageState.COMPLETED, stage_lines(report, final=final).get(name, ""))

    def completed_line(self, name: str, line: str) -> None:
        """The stage ended with this line (a stage whose result is not part of an ``IngestReport``)."""
        self._tell(name, StageState.COMPLETED, line)

    def skipped(self, names: Sequence[str], why: str) -> None:
        """The stages did not run, for the reason ``why``."""
        for name in names:
            self._tell(name, StageState.SKIPPED, why)

    def _tell(self, name: str, state: StageState, line: str = "") -> None:
        announce_stage(name, state, line, self.seconds.get(name))
        if self.control is not None:
            self.control.on_stage(name, state, line)
