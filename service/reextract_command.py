"""``agrag reextract``: extract documents again in place, under the current settings (chunks and evidence ids stay).

In-process it runs the ``agrag-reextract`` flow; when ``agrag serve`` holds the data dir, the server queues it like
an ingestion and this command follows it.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from agrag.service.cli_support import console, fail, server_client
from agrag.service.runtime_env import quiet_prefect_run_loggers

Arguments = Annotated[
    list[str] | None,
    typer.Argument(
        help="Document ids (as `agrag documents` lists them) and Hydra overrides (KEY=VALUE), in any order.",
        show_default=False,
    ),
]


def split_arguments(arguments: list[str] | None) -> tuple[list[str], list[str]]:
    """Document ids and Hydra overrides: an override holds ``=``, which no document id does."""
    given = list(arguments or [])
    return [a for a in given if "=" not in a], [a for a in given if "=" in a]


def reextract(
    arguments: Arguments = None,
    other_settings: Annotated[
        bool,
        typer.Option("--other-settings", help="Every document ingested under other settings than the current ones."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Re-extract named documents even when their settings did not change.")
    ] = False,
) -> None:
    """Re-extract documents in place: their entities, mentions and relations under the current ontology and plan.

    Chunks are not touched, so every evidence id stays valid; merges of entities that are extracted again stand.
    A killed run resumes when the same command is run again. When `agrag serve` holds the data dir, the server runs
    it (after any run before it) and this command follows it.
    """
    from agrag.components.errors import AgragError
    from agrag.flows.reextract_flow import check_request

    document_ids, overrides = split_arguments(arguments)
    try:
        check_request(document_ids, other_settings)
    except AgragError as exc:
        fail(exc)
    server = server_client()
    if server is not None:
        from agrag.service.served_commands import reextract_on_server

        reextract_on_server(server, document_ids, overrides, other_settings=other_settings, force=force)
        return
    _in_process(document_ids, overrides, other_settings=other_settings, force=force)


def _in_process(document_ids: list[str], overrides: list[str], *, other_settings: bool, force: bool) -> None:
    from agrag.components.errors import AgragError
    from agrag.service.server.private_prefect import PrivatePrefectServerError, starting_prefect_api

    try:
        with starting_prefect_api() as prefect_ready:  # Prefect's server loads meanwhile
            from agrag.flows.progress import stage_lines
            from agrag.flows.reextract_flow import run_reextract
            from agrag.pipelines.ingest_components import check_llm_needs, llm_client
            from agrag.pipelines.runtime import check_ingested, compose_config
            from agrag.pipelines.settings import load_settings

            settings = load_settings()
            # a typo, a missing LLM or an empty data dir fails here, before a flow runs
            check_llm_needs(compose_config(overrides, settings).ingest, llm_client(settings.agrag))
            check_ingested(settings.agrag)
            quiet_prefect_run_loggers()
            prefect_ready()
            with stage_lines(None if sys.stderr.isatty() else sys.stderr):
                report = run_reextract(
                    document_ids or None, overrides, other_settings, force, progress_bar=sys.stderr.isatty()
                )
    except (AgragError, PrivatePrefectServerError) as exc:
        fail(exc)
    print_reextract_report(report)


def print_reextract_report(report: object) -> None:
    """A line per document, then the counts."""
    from agrag.flows.reextract_report import ReextractReport, report_lines

    assert isinstance(report, ReextractReport)
    for line in report_lines(report):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
