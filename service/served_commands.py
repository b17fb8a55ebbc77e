"""`agrag ingest`, `delete`, `reextract`, `finalize` when `agrag serve` holds the data dir: the server runs them.

The run is queued on the server (it may wait behind others: the data dir has one writer). The CLI says at once that
it was accepted and what it waits for, follows it, and prints what the in-process command prints. Ctrl+C stops
following, never the run: the run goes on in the server, and the CLI says how to see or cancel it.
"""

from __future__ import annotations

from collections.abc import Sequence

import typer

from agrag.components.data_models.ingestion_run import IngestionRun
from agrag.components.errors import AgragError
from agrag.components.loaders.files_root import resolve_ingest_folder
from agrag.pipelines.settings import load_settings
from agrag.service.cli_support import console, errors, fail
from agrag.service.client.run_follower import RunFollower, accepted_lines, print_outcome
from agrag.service.client.server_client import ServerClient

INTERRUPTED_EXIT = 130  # the shell's code for a command stopped by Ctrl+C


def ingest_on_server(
    server: ServerClient, folder: str, overrides: list[str], *, files: bool = False, only: Sequence[str] = ()
) -> None:
    """Send the ingestion of ``folder`` to the server, follow it, and print its report (``--files``: every file).

    ``only``: paths or globs of the folder's files to ingest (the server resolves them); empty: the whole folder.
    The folder is checked here as in-process (so a wrong path is refused with the same words) and sent as an
    absolute path; the server checks it again against its own ``AGRAG_FILES_ROOT``.
    """
    try:
        with server:
            absolute = resolve_ingest_folder(folder, load_settings().agrag.files_root)
            run = server.ingest(str(absolute), overrides, only)
            final = _follow(server, run)
            print_outcome(console, final, files=files)
    except AgragError as exc:
        fail(exc)


def delete_on_server(server: ServerClient, document_id: str, overrides: list[str]) -> None:
    """Send the deletion of ``document_id`` to the server, follow it, and print its one-line summary."""
    try:
        with server:
            run = server.delete(document_id, overrides)
            print_outcome(console, _follow(server, run))
    except AgragError as exc:
        fail(exc)


def reextract_on_server(
    server: ServerClient, document_ids: list[str], overrides: list[str], *, other_settings: bool, force: bool
) -> None:
    """Send a re-extraction to the server, follow it, and print a line per document and the counts."""
    try:
        with server:
            run = server.reextract(document_ids, overrides, other_settings=other_settings, force=force)
            print_outcome(console, _follow(server, run))
    except AgragError as exc:
        fail(exc)


def finalize_on_server(server: ServerClient, overrides: list[str]) -> None:
    """Send a finalize to the server, follow it, and print its message (and the reports by method)."""
    try:
        with server:
            run = server.finalize(overrides)
            print_outcome(console, _follow(server, run))
    except AgragError as exc:
        fail(exc)


def follow_run(server: ServerClient, run: IngestionRun) -> IngestionRun:
    """Follow a run already on the server until it ends (``agrag runs show --follow``); Ctrl+C stops following."""
    return _follow(server, run, announce=False)


def _follow(server: ServerClient, run: IngestionRun, *, announce: bool = True) -> IngestionRun:
    if announce:
        for line in accepted_lines(server, run):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    try:
        return RunFollower(server, console).follow(run)
    except KeyboardInterrupt:
        errors.print(
            f"Stopped following run {run.id}; it goes on in the agrag server at {server.url}. "
            f"See it with `agrag runs show {run.id} --follow`, cancel it with `agrag runs cancel {run.id}`.",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(code=INTERRUPTED_EXIT) from None
