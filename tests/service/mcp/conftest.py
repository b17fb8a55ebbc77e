"""Fixtures of the MCP tests: an ingested copy of the example corpus, and how to start `agrag mcp` on it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client

from tests.service.conftest import copy_corpus

AGRAG = str(Path(sys.executable).with_name("agrag"))
QUESTION = "Who owns the Orion Planner?"
ADMIN = "admin-token-0123456789abcdef"
TEAM = "team-token-0123456789abcdef0"


@pytest.fixture(scope="module")
def mcp_data_dir(ingested_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the ingested example corpus for this module's MCP servers."""
    return copy_corpus(ingested_corpus, tmp_path_factory.mktemp("mcp"))


def stdio_parameters(data_dir: Path, *args: str, **env: str) -> StdioServerParameters:
    """How the SDK's client starts `agrag mcp ARGS` on ``data_dir``: offline, no AGRAG_ setting of the developer's."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_"))}
    return StdioServerParameters(
        command=AGRAG, args=["mcp", *args], env={**base, "AGRAG_DATA_DIR": str(data_dir), **env}, cwd=data_dir.parent
    )


async def call(session: ClientSession, name: str, arguments: dict[str, Any] | None = None) -> Any:
    """Call a tool that must succeed; its structured result."""
    result = await session.call_tool(name, arguments or {})
    assert not result.isError, f"{name} failed: {text_of(result)}"
    assert result.structuredContent is not None
    assert json.loads(text_of(result)) == result.structuredContent  # the text is the same JSON
    return result.structuredContent


async def refused(session: ClientSession, name: str, arguments: dict[str, Any] | None = None) -> str:
    """Call a tool that must fail; its error text."""
    result = await session.call_tool(name, arguments or {})
    assert result.isError, f"{name} should have failed: {text_of(result)}"
    return text_of(result)


def text_of(result: types.CallToolResult) -> str:
    """The text content of a tool result."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@asynccontextmanager
async def client(url: str, token: str) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session with a bearer token."""
    async with (
        httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
