"""One MCP round trip on the data dir, as a client sees it: ``python -m agrag.service.mcp.demo ["question"]``.

Starts ``agrag mcp`` (or reaches the running ``agrag serve`` through it) with the MCP SDK's own stdio client, then
searches, reads the best passage, checks a cited answer and renders it, printing each step.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

DEFAULT_QUESTION = "Who owns the Orion Planner?"


async def _call(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    result = await session.call_tool(name, arguments)
    block = result.content[0]
    text = block.text if isinstance(block, types.TextContent) else ""
    if result.isError:
        raise SystemExit(f"{name} failed: {text}")
    return result.structuredContent


async def round_trip(question: str) -> None:
    """Print search_evidence -> fetch_evidence -> check_citations -> render_citations for ``question``."""
    command = shutil.which("agrag") or os.path.join(os.path.dirname(sys.executable), "agrag")
    parameters = StdioServerParameters(command=command, args=["mcp"], env=dict(os.environ))
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = [tool.name for tool in (await session.list_tools()).tools]
        print(f"tools: {', '.join(tools)}")
        found = await _call(session, "search_evidence", {"query": question, "limit": 3})
        for hit in found["hits"]:
            print(f"hit   {hit['id']}  {hit['location']['title']}: {hit['snippet'][:80]!r}")
        if not found["hits"]:
            raise SystemExit("Nothing found: ingest a folder first (agrag ingest examples/acme_notes).")
        best = found["hits"][0]["id"]
        fetched = await _call(session, "fetch_evidence", {"ids": [best]})
        print(f"read  {best}: {fetched['items'][0]['text'][:200]!r}")
        answer = f"The answer is in {fetched['items'][0]['location']['title']} [{best}]."
        check = await _call(session, "check_citations", {"answer": answer})
        print(f"check grounded={check['grounded']} cited={check['cited']} invalid={check['invalid']}")
        rendered = await _call(session, "render_citations", {"answer": answer})
        print(json.dumps(rendered, indent=2, ensure_ascii=False))


def main() -> None:
    """Run the round trip for the question given on the command line (or the demo's own)."""
    anyio.run(round_trip, " ".join(sys.argv[1:]) or DEFAULT_QUESTION)


if __name__ == "__main__":
    main()
