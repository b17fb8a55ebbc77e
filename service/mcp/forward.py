"""``agrag mcp`` beside a running ``agrag serve``: a stdio server that forwards the read tools to the server's ``/mcp``.

The server holds the data dir (its stores cannot be opened twice), so this process opens none: it relays the tool
list, the instructions and each call over one streamable HTTP connection, which is this client's connection on the
server (its own evidence session there, within the token's documents).

It serves reads only, as its refusal of ``--allow-write`` says: a server started with ``--allow-write`` offers its
write tools to an unscoped token (the local one included), and this relay neither lists them nor forwards a call
to one (``ForwardedWriteError``).
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

from agrag.service.api.secret_mask import SecretMask
from agrag.service.mcp.error_text import error_text
from agrag.service.mcp.instructions import instructions
from agrag.service.mcp.server import MCP_PATH, SERVER_NAME
from agrag.service.tools.errors import ForwardedWriteError, UnknownToolError
from agrag.service.tools.registry import MCP_READ_TOOLS

CALL_TIMEOUT_SECONDS = 600


def forward_stdio(url: str, token: str, stdout: TextIOWrapper) -> None:
    """Serve stdin/``stdout`` by relaying the read tools to the MCP endpoint of the server at ``url``, with ``token``.

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
            relay = _relay(remote, init, url, SecretMask([token]))
            async with stdio_server(stdout=anyio.wrap_file(stdout)) as (local_read, local_write):
                await relay.run(local_read, local_write, relay.create_initialization_options())

    anyio.run(run)


def _relay(remote: ClientSession, init: types.InitializeResult, url: str, mask: SecretMask) -> Server[Any, Any]:
    """A local server whose tools are the remote server's read tools, called there."""
    relay: Server[Any, Any] = Server(SERVER_NAME, version=init.serverInfo.version, instructions=instructions(False))

    async def read_tools() -> list[types.Tool]:
        return [tool for tool in (await remote.list_tools()).tools if tool.name in MCP_READ_TOOLS]

    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if name not in MCP_READ_TOOLS:  # never forwarded: the remote server may take writes from this token
            offered = [tool.name for tool in (await remote.list_tools()).tools]
            refusal = (
                ForwardedWriteError(name, url) if name in offered else UnknownToolError(name, list(MCP_READ_TOOLS))
            )
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=error_text(refusal, mask))], isError=True
            )
        return await remote.call_tool(name, arguments)

    relay.list_tools()(read_tools)  # type: ignore[no-untyped-call]
    relay.call_tool(validate_input=False)(call_tool)
    return relay
