"""``agrag finalize``: rebuild the communities and reports that ``ingest.finalize=manual`` ingestions left stale.

In-process it runs the ``agrag-finalize`` flow; when ``agrag serve`` holds the data dir, the server queues it like an
ingestion and this command follows it, printing the same lines.
"""

from __future__ import annotations

import sys

from agrag.service.cli_support import Overrides, console, fail, server_client
from agrag.service.runtime_env import quiet_prefect_run_loggers


def finalize(overrides: Overrides = None) -> None:
    """Rebuild communities and their reports once, after ingestions with ingest.finalize=manual left them stale.

    Does nothing (and says so) when they are up to date. When `agrag serve` holds the data dir, the server runs it
    (after any run before it) and this command follows it.
    """
    server = server_client()
    if server is not None:
        from agrag.service.served_commands import finalize_on_server

        finalize_on_server(server, list(overrides or []))
        return
    _in_process(list(overrides or []))


def _in_process(overrides: list[str]) -> None:
    from agrag.components.errors import AgragError
    from agrag.service.server.private_prefect import PrivatePrefectServerError, starting_prefect_api

    try:
        with starting_prefect_api() as prefect_ready:  # Prefect's server loads meanwhile
            from agrag.flows.finalize_run import finalize_lines, run_finalize
            from agrag.flows.progress import stage_lines
            from agrag.pipelines.ingest_components import llm_client, reports_use_llm
            from agrag.pipelines.runtime import check_ingested, compose_config
            from agrag.pipelines.settings import load_settings

            settings = load_settings()
            # a typo, reports=llm without an LLM or an empty data dir fails here, before a flow runs
            communities = compose_config(overrides, settings).ingest.communities
            if communities.enabled:
                reports_use_llm(communities, llm_client(settings.agrag))
            check_ingested(settings.agrag)
            quiet_prefect_run_loggers()
            prefect_ready()
            with stage_lines(None if sys.stderr.isatty() else sys.stderr):
                report = run_finalize(overrides, progress_bar=sys.stderr.isatty())
    except (AgragError, PrivatePrefectServerError) as exc:
        fail(exc)
    for line in finalize_lines(report):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
