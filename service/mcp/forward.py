"""``agrag mcp`` beside a running ``agrag serve``: a stdio server that forwards every call to the server's ``/mcp``.

The server holds the data dir (its stores cannot be opened twice), so this process opens none: it relays the tool
list, the instructions and each call over one streamable HTTP connection, which is this client's connection on the
server (its own evidence session there, within the token's documents).
"""

from __future__ import annotations

from io import TextIOWrapper
from typing import Any

import anyio
import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from agrag.service.mcp.server import MCP_PATH, SERVER_NAME

CALL_TIMEOUT_SECONDS = 600


def forward_stdio(url: str, token: str, stdout: TextIOWrapper) -> None:
    """Serve stdin/``stdout`` by relaying to the MCP endpoint of the server at ``url``, with ``token``.

    Raises:
        httpx.HTTPError: the server cannot be reached (or refuses the token) when the client connects.
    """

    async def run() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(CALL_TIMEOUT_SECONDS, connect=10)) as http,
            streamable_http_client(url.rstrip("/") + MCP_PATH, http_client=http) as (read, write, _),
            ClientSession(read, write) as remote,
        ):
            init = await remote.initialize()
            relay = _relay(remote, init)
            async with stdio_server(stdout=anyio.wrap_file(stdout)) as (local_read, local_write):
                await relay.run(local_read, local_write, relay.create_initialization_options())

    anyio.run(run)


def _relay(remote: ClientSession, init: types.InitializeResult) -> Server[Any, Any]:
    """A local server whose tools are the remote server's, called there."""
    relay: Server[Any, Any] = Server(SERVER_NAME, version=init.serverInfo.version, instructions=init.instructions)

    async def list_tools() -> list[types.Tool]:
        return (await remote.list_tools()).tools

    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return await remote.call_tool(name, arguments)

    relay.list_tools()(list_tools)  # type: ignore[no-untyped-call]
    relay.call_tool(validate_input=False)(call_tool)
    return relay
