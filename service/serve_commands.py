"""``agrag serve`` (the data dir over HTTP, in one process) and ``agrag serve-ingest`` (Prefect runs, no server)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agrag.service.cli_support import Overrides, console, errors, fail
from agrag.service.runtime_env import log_served_runs_at_info

if TYPE_CHECKING:
    from agrag.pipelines.settings import AgragSettings
    from agrag.service.api.allowed_hosts import BindAddress


def serve_ingest(
    name: Annotated[
        str, typer.Option("--name", help="The deployment's name; runs start as 'agrag-ingest/NAME'.")
    ] = "agrag-ingest",
    limit: Annotated[
        int,
        typer.Option(
            "--limit",
            min=1,
            help="Runs that may execute at once; more wait their turn. Runs into the same data dir cannot overlap.",
        ),
    ] = 1,
) -> None:
    """Serve ingestion as a Prefect deployment: start runs (folder, overrides) from the Prefect UI. Needs a server."""
    log_served_runs_at_info()  # before Prefect is imported: it reads its settings once, and runs inherit them
    from agrag.components.errors import AgragError

    try:
        from agrag.flows import ingest_deployment as deployment
        from agrag.pipelines.settings import load_settings

        deployment.check_deployment_name(name)
        data_dir = load_settings().agrag.data_dir
        _refuse_a_served_data_dir(data_dir)
        api_url = deployment.prefect_api_url()
    except AgragError as exc:
        fail(exc)
        return
    ui_url = deployment.prefect_ui_url()
    full_name = deployment.deployment_full_name(name)
    lines = [
        f"Serving ingestion as the Prefect deployment {full_name}",
        f"  Prefect API: {api_url}",
        *([f"  Prefect UI:  {ui_url}  (Deployments → {full_name} → Run → Custom run)"] if ui_url else []),
        f"  Runs write into {data_dir.resolve()} unless a run sets data_dir",
        f"  A relative folder is read from {Path.cwd()}",
        "Start a run from a shell:",
        f"  {deployment.example_run_command(name)}",
        "Press Ctrl+C to stop serving.",
    ]
    # The example command holds a JSON list, which rich would read as markup.
    console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)
    deployment.serve_ingest(data_dir, name, limit=limit)


def _refuse_a_served_data_dir(data_dir: Path) -> None:
    """``serve-ingest`` cannot run beside the ``agrag serve`` that holds ``data_dir``: that server runs ingestions.

    Raises:
        ConfigError: a server holds the data dir (the message says where to send runs instead).
    """
    from agrag.components.errors import ConfigError
    from agrag.service.server.server_file import find_server

    server = find_server(data_dir)
    if server is not None:
        raise ConfigError(
            f"`agrag serve` (process {server.pid}, {server.url}) holds the data dir {data_dir}, so runs of "
            "`agrag serve-ingest` could not write it. That server runs ingestions itself: with PREFECT_API_URL set it "
            "serves the agrag-ingest deployment (start runs from the Prefect UI as usual), and `agrag ingest FOLDER` "
            "sends the run to it. Stop it to use `agrag serve-ingest` on this data dir."
        )


def _host_lines(bind: BindAddress, settings: AgragSettings) -> list[str]:
    """What a server other machines reach (or one with allowed hosts or origins set) says about its Host check."""
    from agrag.service.api.access import is_loopback
    from agrag.service.api.allowed_hosts import AllowedHosts

    if is_loopback(bind.host) and not settings.allowed_hosts and not settings.allowed_origins:
        return []
    allowed = AllowedHosts.for_bind(bind, settings)
    lines = [
        f"Requests must name this server in their Host header as {allowed.describe()}; any other name gets 421 "
        "(against DNS rebinding). Set AGRAG_ALLOWED_HOSTS (comma-separated) to the names clients use, if others."
    ]
    if settings.allowed_origins:
        lines.append(f"Web pages of {', '.join(settings.allowed_origins)} may call it too (AGRAG_ALLOWED_ORIGINS).")
    return lines


def serve(
    overrides: Overrides = None,
    *,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; other than loopback it needs AGRAG_API_TOKENS.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on; 0: any free port.")] = 8765,
    shutdown_timeout: Annotated[
        float,
        typer.Option("--shutdown-timeout", min=0, help="Seconds a running ingestion may take to stop on shutdown."),
    ] = 30.0,
    deployment: Annotated[
        str,
        typer.Option(
            "--deployment",
            help="With a Prefect server at PREFECT_API_URL: the deployment this server serves (runs start as "
            "'agrag-ingest/NAME' from the Prefect UI); '' serves none.",
        ),
    ] = "agrag-ingest",
    allow_write: Annotated[
        bool,
        typer.Option(
            "--allow-write",
            help="Also offer the MCP write tools (ingest, delete_document) at /mcp, to unscoped tokens.",
        ),
    ] = False,
) -> None:
    """Serve the data dir over HTTP (search, evidence sessions, status, ingestion, MCP at /mcp); OpenAPI at /docs.

    The server holds the data dir: `agrag search`, `agrag evidence ...`, `agrag ingest` and `agrag status` on this
    machine send their requests to it. With PREFECT_API_URL set it also serves the agrag-ingest deployment: runs
    started from the Prefect UI run here, one at a time with the others. Ctrl+C or SIGTERM stops it after the batch
    being written.
    """
    began = time.perf_counter()
    log_served_runs_at_info()  # before Prefect is imported: the served runs' logs must reach the Prefect UI
    from agrag.components.errors import AgragError

    try:
        from agrag.pipelines.settings import load_settings
        from agrag.service.api.access import AccessPolicy, load_tokens, new_owner_token

        owner_token = new_owner_token()
        access = AccessPolicy(load_tokens(load_settings().agrag), owner_token)
        access.check_host(host)  # at once: before the models load and the data dir is touched
        from agrag.pipelines.config_loader import load_config

        load_config(list(overrides or []))  # a mistyped override too, before the seconds of imports the rest needs

        from agrag.flows.ingest_deployment import check_deployment_name
        from agrag.pipelines.runtime import open_runtime
        from agrag.pipelines.settings import load_settings
        from agrag.service.server import http_server
        from agrag.service.server.log_lines import configure_logging

        settings = load_settings()
        if deployment:
            check_deployment_name(deployment)
        runtime = open_runtime(list(overrides or []), settings, require_data=False)
        runtime.serve_long()
    except AgragError as exc:
        fail(exc)
    try:
        bound = http_server.bind(host, port)
    except OSError as exc:
        runtime.close()
        errors.print(f"Error: {exc.strerror or exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(code=1) from None

    lines = _host_lines(bound.address, settings.agrag)

    def started(url: str) -> None:
        console.print(
            "\n".join(
                [f"agrag serves {runtime.data_dir} at {url} (OpenAPI page: {url}/docs); Ctrl+C stops it.", *lines]
            ),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        sys.stdout.flush()

    configure_logging()
    queue = http_server.open_queue(runtime, deployment or None)
    http_server.serve(
        runtime,
        access,
        bound,
        owner_token,
        queue=queue,
        shutdown_seconds=shutdown_timeout,
        on_started=started,
        mcp_writes=allow_write,
        started=began,
    )
