"""``agrag runs``: the ingestion runs of the ``agrag serve`` that holds the data dir: list, show (and follow), cancel.

Runs are queued by the server (the data dir has one writer), so these commands need it; without one they say so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agrag.components.data_models.ingestion_run import IngestionRun, RunKind, RunState
from agrag.components.safe_text import printable
from agrag.service.cli_support import console, fail, on_server, server_client

if TYPE_CHECKING:
    from agrag.service.client.server_client import ServerClient

runs = typer.Typer(
    no_args_is_help=True,
    help="Ingestion runs of the `agrag serve` that holds the data dir: list them, show or follow one, cancel one.",
)

RunId = Annotated[str, typer.Argument(help="The run's id (from `agrag runs list`, or what `agrag ingest` printed).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print as JSON.")]
ENDED_WELL = (RunState.COMPLETED, RunState.COMPLETED_WITH_FAILURES)
STATE_COLOURS = {
    RunState.QUEUED: "cyan",
    RunState.RUNNING: "blue",
    RunState.COMPLETED: "green",
    RunState.COMPLETED_WITH_FAILURES: "yellow",
    RunState.FAILED: "red",
    RunState.CANCELLED: "dim",
    RunState.INTERRUPTED: "yellow",
}


def _server(command: str) -> ServerClient:
    """The client of the server holding the data dir; without one the command ends saying so."""
    from agrag.pipelines.settings import load_settings
    from agrag.service.client.errors import NoServerError

    server = server_client()
    if server is None:
        fail(NoServerError(load_settings().agrag.data_dir, command))
    return server


def _json(items: IngestionRun | list[IngestionRun]) -> str:
    from pydantic import TypeAdapter

    return json.dumps(TypeAdapter(type(items)).dump_python(items, mode="json"), ensure_ascii=False)


@runs.command("list")
def runs_list(
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="The most runs shown, newest first.")] = 20,
    as_json: AsJson = False,
) -> None:
    """The runs (ingestions and deletes), newest first: state, what they write, when, and how they ended."""
    found = on_server(_server("agrag runs list"), lambda server: server.runs(limit))
    if as_json:
        console.print_json(_json(found))
        return
    console.print(runs_lines(found), markup=False, highlight=False, soft_wrap=True)


@runs.command("show")
def runs_show(
    run_id: RunId,
    follow: Annotated[bool, typer.Option("--follow", help="Follow the run until it ends, stage by stage.")] = False,
    as_json: AsJson = False,
) -> None:
    """One run: its state, its stages and, once it ended, its report."""
    from agrag.service.served_commands import follow_run

    def show(server: ServerClient) -> IngestionRun:
        run = server.run(run_id)
        if follow and not run.state.final:
            run = follow_run(server, run)
        return run

    run = on_server(_server("agrag runs show"), show)
    if as_json:
        console.print_json(_json(run))
        return
    print_run(console, run)


@runs.command("cancel")
def runs_cancel(run_id: RunId) -> None:
    """Cancel a queued run (it never starts), or stop a running one at its next safe point (committed batches stay)."""
    run = on_server(_server("agrag runs cancel"), lambda server: server.cancel(run_id))
    console.print(f"Run {run.id} ({_doing(run)}): {run.state.value}. {run.message}", markup=False, highlight=False)


def _doing(run: IngestionRun) -> str:
    return printable(f"{run.kind.action} {run.target}", multiline=False)  # a folder's name on one line


def _state(run: IngestionRun) -> str:
    return f"[{STATE_COLOURS.get(run.state, 'white')}]{run.state.value}[/]"


def runs_lines(found: list[IngestionRun]) -> str:
    """The runs, newest first, one line each: id, what, state, when it ended, and its message."""
    if not found:
        return "No runs yet."
    lines = [f"{len(found)} runs, newest first:"]
    for run in found:
        ended = run.finished.replace("T", " ").removesuffix("Z")[:19] if run.finished else "not ended"
        message = printable(run.message, multiline=False)
        lines.append(f"{run.id}  {_doing(run)}  [{run.source.value}]  {run.state.value}  {ended}  {message}")
    return "\n".join(lines)


def print_run(out: Console, run: IngestionRun) -> None:
    """A run: what it writes, its state and message, its stages, and the report of a finished run."""
    out.print(f"[bold]Run {run.id}[/bold]: {escape(_doing(run))}, from {run.source.value}; {_state(run)}")
    moments = (("asked", run.created), ("started", run.started), ("finished", run.finished))
    times = [f"{name} {value}" for name, value in moments if value]
    out.print("; ".join(times), markup=False, highlight=False)
    if run.overrides:
        out.print(f"overrides: {' '.join(run.overrides)}", markup=False, highlight=False)
    if run.message:
        out.print(run.message, markup=False, highlight=False)
    if run.stages:
        stages = Table(title="stages", title_justify="left")
        for column in ("stage", "state", "seconds", "result"):
            stages.add_column(column, justify="right" if column == "seconds" else "left")
        for stage in run.stages:
            stages.add_row(stage.name, stage.state.value, f"{stage.seconds:.2f}", escape(stage.line))
        out.print(stages)
    if run.kind != RunKind.DELETE and run.report is not None and run.state in ENDED_WELL:  # a delete's is its message
        from agrag.service.client.run_follower import print_outcome

        print_outcome(out, run)
