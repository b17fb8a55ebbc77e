"""``agrag mcp``: the evidence tools for Claude Code, Cursor or any MCP client, over stdio."""

from __future__ import annotations

import logging
import os
from io import TextIOWrapper
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agrag.service.cli_support import Overrides, fail

if TYPE_CHECKING:
    from agrag.pipelines.settings import AgragSettings

SHUTDOWN_SECONDS = 30.0


def mcp(
    overrides: Overrides = None,
    *,
    document: Annotated[
        list[str] | None,
        typer.Option("--document", help="Serve only this document id (repeatable); default: every document."),
    ] = None,
    allow_write: Annotated[
        bool,
        typer.Option("--allow-write", help="Also offer the write tools (ingest, delete_document); clients ask first."),
    ] = False,
    ledger_capacity: Annotated[
        int | None,
        typer.Option(
            "--ledger-capacity",
            min=1,
            help="Evidence items the client's session keeps to cite (default: AGRAG_MCP_LEDGER_CAPACITY, else 2000).",
        ),
    ] = None,
    max_result_chars: Annotated[
        int | None,
        typer.Option(
            "--max-result-chars",
            min=2000,
            help="Replies longer than this are shortened (default: AGRAG_MCP_MAX_RESULT_CHARS, else 40000).",
        ),
    ] = None,
    files_root: Annotated[
        Path | None,
        typer.Option(
            "--files-root",
            help="With --allow-write: the folder whose files `ingest` may read (globs allowed; default: "
            "AGRAG_FILES_ROOT); no file outside it is read.",
        ),
    ] = None,
) -> None:
    """Serve the evidence tools to one MCP client over stdin/stdout (logs go to stderr).

    Configure your client to run `agrag mcp` in the folder that holds the data dir (or with AGRAG_DATA_DIR set).
    When `agrag serve` holds the data dir, this process forwards the client's calls to that server's /mcp.
    """
    from agrag.components.errors import AgragError, ConfigError
    from agrag.pipelines.settings import load_settings

    # what the flags and settings alone show is refused before the heavy imports (0.3 s instead of 5.4 s), and
    # none of these steps writes to stdout
    if files_root is not None:
        if not allow_write:
            fail(ConfigError("--files-root is for the ingest tool, which only --allow-write offers; add it."))
        from agrag.components.loaders.files_root import check_files_root

        try:
            root = check_files_root(files_root, "--files-root")
        except AgragError as exc:
            fail(exc)
        if not root.is_dir():  # else every ingest call would fail later, after the client was told it may ingest
            fail(
                ConfigError(
                    f"--files-root {files_root} is not a folder on this machine. Give the folder the ingest tool may "
                    "read (it must exist), or leave --files-root out to use AGRAG_FILES_ROOT."
                )
            )
        # the ingestion flow reads its settings from the environment, as every run does: it must see this root
        os.environ["AGRAG_FILES_ROOT"] = str(root)
    try:
        settings = load_settings().agrag
    except AgragError as exc:
        fail(exc)
    from agrag.service.mcp.stdio import protocol_stdout

    stdout = protocol_stdout()  # before any other import: nothing but the protocol may reach the real stdout
    from agrag.service.mcp.server import McpOptions
    from agrag.service.server.log_lines import configure_logging

    configure_logging()
    options = McpOptions.from_settings(settings, allow_write, ledger_capacity, max_result_chars)
    _forward_to_a_running_server(settings, document, allow_write, list(overrides or []), stdout)
    try:
        from agrag.pipelines.runtime import open_runtime
        from agrag.service.mcp.stdio import serve_stdio
        from agrag.service.tools.tool import ToolHost

        if allow_write and document:
            raise ConfigError("--allow-write serves every document; leave out --document (or serve reads only).")
        with open_runtime(list(overrides or []), require_data=not allow_write) as runtime:
            runtime.serve_long()
            if not allow_write:
                serve_stdio(ToolHost(runtime), options, document, stdout)
                return
            _serve_writes(runtime, options, stdout)
    except AgragError as exc:
        fail(exc)


def _serve_writes(runtime: Any, options: Any, stdout: TextIOWrapper) -> None:
    """Serve reads and writes: an ingestion queue (as `agrag serve` runs one) writes through this runtime."""
    from agrag.pipelines.runtime import serving
    from agrag.service.mcp.stdio import serve_stdio
    from agrag.service.server.http_server import open_queue
    from agrag.service.tools.write_tools import WriteHost

    queue = open_queue(runtime)
    queue.start()
    try:
        with serving(runtime):
            serve_stdio(WriteHost(runtime, queue), options, None, stdout)
    finally:
        queue.shutdown(SHUTDOWN_SECONDS)


def _forward_to_a_running_server(
    settings: AgragSettings, document: list[str] | None, allow_write: bool, overrides: list[str], stdout: TextIOWrapper
) -> None:
    """When `agrag serve` holds the data dir, relay to its /mcp until the client leaves, then exit."""
    from agrag.components.errors import ConfigError
    from agrag.service.server.server_file import find_server

    info = find_server(settings.data_dir)
    if info is None:
        return
    if allow_write:
        fail(
            ConfigError(
                f"`agrag serve` (process {info.pid}, {info.url}) holds the data dir and its /mcp serves reads only. "
                "Send writes to it with `agrag ingest` / `agrag delete`, or stop it to use `agrag mcp --allow-write`."
            )
        )
    if overrides:
        fail(
            ConfigError(
                f"`agrag serve` (process {info.pid}, {info.url}) holds the data dir and runs with its own settings, so "
                f"the overrides {overrides} cannot apply. Leave them out; a client picks recipes in the search tool."
            )
        )
    if document:
        fail(
            ConfigError(
                f"`agrag serve` (process {info.pid}, {info.url}) holds the data dir, so this client reaches it through "
                "its /mcp, where a token's documents set the scope: set AGRAG_API_TOKEN to a token limited to the "
                "documents instead of --document."
            )
        )
    from agrag.service.mcp.forward import forward_stdio

    token = settings.api_token.get_secret_value() if settings.api_token is not None else info.token
    logging.getLogger(__name__).info("Forwarding to the MCP endpoint of %s", info.url)
    try:
        forward_stdio(info.url, token, stdout)
    except Exception as exc:  # the server went away or refused: say which server, and what to do
        from agrag.service.client.errors import ServerUnavailableError

        reason = _first_cause(exc)
        fail(ServerUnavailableError(info.url, info.pid, settings.data_dir, reason))
    raise typer.Exit(code=0)


def _first_cause(exc: BaseException) -> str:
    """The first error inside an exception group (anyio's task groups wrap what the transport raised)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
