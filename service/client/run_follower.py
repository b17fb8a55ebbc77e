"""Follow a run on the server until it ends, and print what it did as the in-process command prints it.

On a terminal each stage has a live line (a spinner while it runs, then its result and time); in a pipe each stage
prints one line when it ends, so a log file reads top to bottom. At the end comes the command's own output: the
ingest report (and ``--files``), the delete's one-line summary, the re-extraction's or the finalize's lines.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import TypeAdapter
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task, TaskID, TextColumn
from rich.text import Text

from agrag.components.data_models.ingestion_run import IngestionRun, RunKind, RunState, StageState, StageStatus
from agrag.components.errors import AgragError
from agrag.flows.finalize_flow import FinalizeReport
from agrag.flows.finalize_run import finalize_lines
from agrag.flows.ingest_report import IngestReport
from agrag.flows.reextract_report import ReextractReport, report_lines
from agrag.service.client.errors import RunEndedError, error_class, error_from
from agrag.service.client.server_client import ServerClient
from agrag.service.console import file_status_table, print_ingest_report

POLL_SECONDS = 0.5
NAMED_AHEAD = 5  # runs named in the "queued behind" line

_REPORT = TypeAdapter(IngestReport)
_REEXTRACT_REPORT = TypeAdapter(ReextractReport)
_FINALIZE_REPORT = TypeAdapter(FinalizeReport)
_MARKS = {
    StageState.COMPLETED: "[green]✓[/green]",
    StageState.SKIPPED: "[dim]-[/dim]",
    StageState.FAILED: "[red]✗[/red]",
    StageState.INTERRUPTED: "[yellow]![/yellow]",
}


def doing(run: IngestionRun) -> str:
    """What a run does, in a few words: ``ingesting FOLDER``, ``deleting DOCUMENT``, ``re-extracting IDS``..."""
    return f"{run.kind.doing} {run.target}"


def accepted_lines(server: ServerClient, run: IngestionRun) -> list[str]:
    """What the CLI says the moment the server accepted a run: its id, and which runs it waits for."""
    lines = [f"Accepted by the agrag server at {server.url} as run {run.id}."]
    if run.state == RunState.QUEUED and run.queued_behind:
        named = ", ".join(_ahead(server, run_id) for run_id in run.queued_behind[:NAMED_AHEAD])
        more = len(run.queued_behind) - NAMED_AHEAD
        named += f" and {more} more" if more > 0 else ""
        if len(run.queued_behind) == 1:
            lines.append(f"Queued behind {named}; it starts when that run has finished.")
        else:
            lines.append(f"Queued behind {len(run.queued_behind)} runs: {named}; it starts when they have finished.")
    return lines


def _ahead(server: ServerClient, run_id: str) -> str:
    try:
        return f"run {run_id} ({doing(server.run(run_id))})"
    except AgragError:  # it ended and was forgotten meanwhile: its id says enough
        return f"run {run_id}"


def stage_line(stage: StageStatus) -> str:
    """One finished stage as a pipe shows it."""
    if stage.state == StageState.SKIPPED:
        return f"{stage.name}: skipped, {stage.line}"
    if stage.state == StageState.FAILED:
        return f"{stage.name}: failed, {stage.line}"
    if stage.state == StageState.INTERRUPTED:
        return f"{stage.name}: interrupted ({stage.seconds:.2f} s)"
    return f"{stage.name}: {stage.line or 'done'} ({stage.seconds:.2f} s)"


class RunFollower:
    """Polls a run on the server and shows its stages until it ends.

    Usage:
        ```python
        final = RunFollower(server, console).follow(run)
        ```
    """

    def __init__(
        self,
        server: ServerClient,
        console: Console,
        *,
        live: bool | None = None,
        poll_seconds: float = POLL_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Follow runs of ``server`` on ``console``; ``live`` (default: on a terminal) shows live stage lines."""
        self.server = server
        self.console = console
        self.live = console.is_terminal if live is None else live
        self.poll_seconds = poll_seconds
        self._sleep = sleep

    def follow(self, run: IngestionRun) -> IngestionRun:
        """Show ``run`` until it ends; the run as it ended.

        Raises:
            KeyboardInterrupt: the user stopped following (the run goes on in the server).
            AgragError: the server stopped answering.
        """
        if self.live:
            return self._follow_live(run)
        return self._follow_lines(run)

    def _poll(self, run: IngestionRun) -> IngestionRun:
        self._sleep(self.poll_seconds)
        return self.server.run(run.id)

    def _follow_lines(self, run: IngestionRun) -> IngestionRun:
        printed: set[str] = set()
        was_queued = run.state == RunState.QUEUED and bool(run.queued_behind)  # else it starts at once
        while True:
            if was_queued and run.state != RunState.QUEUED:
                was_queued = False
                if run.state == RunState.RUNNING:
                    self._say(f"Run {run.id} started.")
            for stage in run.stages:
                if stage.state in _MARKS and stage.name not in printed:
                    printed.add(stage.name)
                    self._say(stage_line(stage))
            if run.state.final:
                return run
            run = self._poll(run)

    def _say(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def _follow_live(self, run: IngestionRun) -> IngestionRun:
        columns = (_MarkColumn(), TextColumn("{task.description}"), _SecondsColumn(), TextColumn("{task.fields[line]}"))
        with Progress(*columns, console=self.console, transient=False) as progress:
            waiting = None
            if run.state == RunState.QUEUED:
                waiting = progress.add_task("queued", line="waiting for the runs before it", mark="", seconds=0.0)
            tasks: dict[str, TaskID] = {}
            ended: set[str] = set()
            while True:
                if waiting is not None and run.state != RunState.QUEUED:
                    progress.remove_task(waiting)
                    waiting = None
                for stage in run.stages:
                    if stage.name not in tasks:
                        tasks[stage.name] = progress.add_task(stage.name, line="", mark="", seconds=0.0)
                    if stage.state in _MARKS and stage.name not in ended:
                        ended.add(stage.name)
                        mark, line = _MARKS[stage.state], escape(stage.line)
                        progress.update(
                            tasks[stage.name], total=1, completed=1, line=line, mark=mark, seconds=stage.seconds
                        )
                if run.state.final:
                    return run
                run = self._poll(run)


class _MarkColumn(SpinnerColumn):
    """A spinner while the stage runs, then ✓ (completed), - (skipped) or ✗ (failed)."""

    def render(self, task: Task) -> Text:
        if task.finished:
            return Text.from_markup(task.fields.get("mark") or " ")
        rendered = super().render(task)
        return rendered if isinstance(rendered, Text) else Text(" ")


class _SecondsColumn(ProgressColumn):
    """The stage's time: counting while it runs, the server's measure once it ended."""

    def render(self, task: Task) -> Text:
        if task.finished:
            return Text(f"{task.fields.get('seconds', 0.0):7.2f} s", style="dim")
        return Text(f"{task.elapsed or 0.0:7.1f} s", style="dim")


def print_outcome(console: Console, run: IngestionRun, *, files: bool = False) -> None:
    """What the in-process command prints when it ends, from the run's report.

    The ingest report (and the files), the delete's line, the re-extraction's line per document, or the finalize's
    message.

    Raises:
        RunEndedError: the run failed, was cancelled or was interrupted (the message is the run's).
    """
    if run.state not in (RunState.COMPLETED, RunState.COMPLETED_WITH_FAILURES):
        message = run.message or f"Run {run.id} ended {run.state.value}."
        kind = error_class(run.error) if run.error else None
        raise RunEndedError(message) if kind is None else error_from(0, {"error": run.error, "message": message})
    if run.kind == RunKind.DELETE:
        console.print(run.message, markup=False, highlight=False)  # the run's message is the delete's summary
        return
    if run.report is None:
        raise RunEndedError(f"Run {run.id} ended {run.state.value} but the server kept no report of it.")
    if run.kind in (RunKind.REEXTRACT, RunKind.FINALIZE):
        lines = (
            report_lines(_REEXTRACT_REPORT.validate_python(run.report))
            if run.kind == RunKind.REEXTRACT
            else finalize_lines(_FINALIZE_REPORT.validate_python(run.report))
        )
        for line in lines:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        return
    report = _REPORT.validate_python(run.report)
    print_ingest_report(console, report)
    if files:
        console.print(file_status_table(report.files))
