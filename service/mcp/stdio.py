"""``agrag mcp`` over stdio: one client per process, stdout kept for the protocol alone.

Before anything else runs, the process's file descriptor 1 is moved aside for the protocol and fd 1 is pointed at
stderr, so a library that prints (a progress bar, a banner, C code writing to fd 1) cannot corrupt the stream.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from io import TextIOWrapper
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from agrag.pipelines.document_ids import check_documents_known
from agrag.service.api.access import Caller
from agrag.service.mcp.server import AgragMcpServer, McpOptions
from agrag.service.tools.tool import ToolHost

LOCAL = "stdio"


def protocol_stdout() -> TextIOWrapper:
    """A text stream on the real stdout, for the protocol only; fd 1 (and ``sys.stdout``) then go to stderr."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return TextIOWrapper(os.fdopen(protocol_fd, "wb", buffering=0), encoding="utf-8", write_through=True)


def local_caller(documents: Sequence[str] | None) -> Caller:
    """The one client of a stdio server, limited to ``documents`` (None: every document)."""
    return Caller(LOCAL, LOCAL, tuple(documents) if documents else None)


def serve_stdio(host: ToolHost, options: McpOptions, documents: Sequence[str] | None, stdout: TextIOWrapper) -> None:
    """Serve the MCP tools over stdin and ``stdout`` until the client closes stdin.

    Raises:
        UnknownDocumentIdError: ``documents`` names ids of no stored document.
    """
    if documents:
        check_documents_known(host.runtime.store.graph, documents)
    caller = local_caller(documents)

    def caller_of(context: Any) -> Caller:
        return caller

    mcp = AgragMcpServer(host, caller_of, options)

    async def run() -> None:
        async with stdio_server(stdout=anyio.wrap_file(stdout)) as (read, write):
            await mcp.server.run(read, write, mcp.server.create_initialization_options())

    anyio.run(run)
