"""``AgragMcpServer``: the tools of ``agrag.service.tools`` as an MCP server on the SDK's low-level ``Server``.

Each tool is defined once (name, pydantic input, description, handler); here it becomes an MCP tool whose input
schema is the input model's JSON Schema, annotated read-only or destructive. The write tools (with ``--allow-write``)
are listed to, and run for, only a caller that may read every document. Every call runs in a worker thread inside
its connection's evidence session, and its reply is bounded (``bounded_result``): the text sent is the compact JSON
whose length was measured, so no reply is longer than ``max_result_chars``. A failure is a short error result
(``error_text``) while the detail goes to the log.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from pydantic import ValidationError

from agrag.components.errors import AgragError
from agrag.service.api.access import Caller
from agrag.service.api.secret_mask import SecretMask, settings_secrets
from agrag.service.mcp.bounded_result import (
    COMPACT,
    DEFAULT_MAX_RESULT_CHARS,
    BoundedResult,
    bound,
    evidence_ids,
    size,
)
from agrag.service.mcp.connections import Connection, Connections
from agrag.service.mcp.error_text import error_text
from agrag.service.mcp.instructions import instructions
from agrag.service.mcp.ledger_limits import DEFAULT_LEDGER_CAPACITY
from agrag.service.tools.errors import ReadOnlyToolError, ScopedWriteError, UnknownToolError
from agrag.service.tools.registry import MCP_READ_TOOLS, WRITE_TOOLS
from agrag.service.tools.tool import Tool, ToolContext, ToolHost

if TYPE_CHECKING:
    from agrag.pipelines.settings import AgragSettings
    from agrag.service.mcp.ledger import LedgerSession

logger = logging.getLogger(__name__)

SERVER_NAME = "agrag"
MCP_PATH = "/mcp"  # where `agrag serve` answers MCP over streamable HTTP
MAX_BOUND_ROUNDS = 4
NOTES_MARGIN = 200
NAMED_CUT_EVIDENCE = 20  # more are counted, not named, so the notes stay small
NAMED_CUTS = 10  # the same for the lines that say what was cut
CallerOf = Callable[[Any], Caller]
"""Who sent a request, from the SDK's request context (stdio: the one local client; HTTP: the bearer token)."""


@dataclass(frozen=True)
class McpOptions:
    """How an MCP server serves its tools.

    Attributes:
        allow_write: List and accept the write tools (ingest, delete_document, ...) for callers that may read every
            document; off by default.
        ledger_capacity: Evidence items each connection keeps for citations, the oldest dropped first.
        max_result_chars: Replies longer than this (as JSON) are shortened and marked truncated.
    """

    allow_write: bool = False
    ledger_capacity: int = DEFAULT_LEDGER_CAPACITY
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS

    @classmethod
    def from_settings(
        cls,
        settings: AgragSettings,
        allow_write: bool = False,
        ledger_capacity: int | None = None,
        max_result_chars: int | None = None,
    ) -> McpOptions:
        """The options of ``AGRAG_MCP_LEDGER_CAPACITY`` and ``AGRAG_MCP_MAX_RESULT_CHARS``, unless given here."""
        return cls(
            allow_write,
            settings.mcp_ledger_capacity if ledger_capacity is None else ledger_capacity,
            settings.mcp_max_result_chars if max_result_chars is None else max_result_chars,
        )


class AgragMcpServer:
    """The MCP server over one ``ToolHost``: tool listing, tool calls, one evidence session per connection.

    Usage:
        ```python
        mcp = AgragMcpServer(ToolHost(runtime), lambda ctx: LOCAL_CALLER, McpOptions())
        async with stdio_server() as (read, write):
            await mcp.server.run(read, write, mcp.server.create_initialization_options())
        ```
    """

    def __init__(
        self, host: ToolHost, caller_of: CallerOf, options: McpOptions = McpOptions(), secrets: Sequence[str] = ()
    ) -> None:
        """Serve ``host``'s tools to the callers ``caller_of`` names; ``secrets`` are masked in every error."""
        self.host = host
        self.options = options
        self._caller_of = caller_of
        self._mask = SecretMask([*secrets, *settings_secrets(host.runtime.settings.agrag)])
        self._tools: dict[str, Tool[Any, Any]] = dict(MCP_READ_TOOLS)
        if options.allow_write:
            self._tools.update(WRITE_TOOLS)
        # Imports the evidence session (Haystack and torch): not at import, which `agrag mcp` forwarding shares.
        from agrag.service.mcp.ledger import LedgerSession  # noqa: PLC0415

        runtime = host.runtime
        self.connections = Connections(
            lambda caller: LedgerSession(
                runtime.store, runtime.embedder, caller.scope, options.ledger_capacity, runtime.graph_passages
            )
        )
        self.server: Server[Any, Any] = Server(
            SERVER_NAME, version=version("agrag"), instructions=instructions(options.allow_write)
        )
        self.server.list_tools()(self._list_tools)  # type: ignore[no-untyped-call]
        self.server.call_tool(validate_input=False)(self._call_tool)  # the pydantic input model validates

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tools this server lists, in order."""
        return tuple(self._tools)

    def offered(self, caller: Caller) -> dict[str, Tool[Any, Any]]:
        """The tools ``caller`` is offered: the write tools (and ``preview_files``) only to an unscoped caller."""
        if caller.unscoped:
            return self._tools
        return {name: tool for name, tool in self._tools.items() if name not in WRITE_TOOLS}

    async def _list_tools(self) -> list[types.Tool]:
        caller = self._caller_of(self.server.request_context)
        return [_mcp_tool(name, tool) for name, tool in self.offered(caller).items()]

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            context = self.server.request_context
            caller = self._caller_of(context)
            tool = self._tool(name, caller)
            connection = self.connections.get(context.session, caller)
            structured = await anyio.to_thread.run_sync(self._run, connection, tool, arguments)
        except (AgragError, ValidationError) as exc:  # the caller's mistake or a known failure: its message says all
            logger.info("MCP tool %s refused: %s", name, self._mask(str(exc)))
            return _error_result(error_text(exc, self._mask))
        except Exception as exc:  # anything else becomes a short error result; the traceback goes to the log
            logger.exception("MCP tool %s failed", name)
            return _error_result(error_text(exc, self._mask))
        text = json.dumps(structured, ensure_ascii=False, separators=COMPACT)  # what ``size`` measured
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structuredContent=structured)

    def _tool(self, name: str, caller: Caller) -> Tool[Any, Any]:
        """The tool ``name`` as ``caller`` may call it (the write tools only with every document readable)."""
        tool = self._tools.get(name)
        if tool is not None:
            if name in WRITE_TOOLS and not caller.unscoped:
                raise ScopedWriteError(name) if tool.writes else ScopedWriteError(name, "reads the files root")
            return tool
        if name in WRITE_TOOLS:
            raise ReadOnlyToolError(name)
        raise UnknownToolError(name, tuple(self.offered(caller)))

    def _run(self, connection: Connection, tool: Tool[Any, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one call in the connection's session (one at a time per connection); its reply, bounded."""
        session = connection.session
        with connection.lock:
            output = tool.run(ToolContext(self.host, connection.caller.scope, session), arguments)
            reply, dropped = self._bounded(tool.dump(output), session)
            session.forget(dropped)  # the client never got them whole: they cannot be cited
        return reply

    def _bounded(self, data: Any, session: LedgerSession) -> tuple[dict[str, Any], tuple[str, ...]]:
        """The reply whose compact JSON (the text sent) is within the limit, notes included; the evidence cut."""
        limit = self.options.max_result_chars
        pushed_out = session.take_dropped()
        budget = limit
        for _ in range(MAX_BOUND_ROUNDS):
            bounded = bound(data, budget)
            reply = self._with_notes(bounded, session, pushed_out)
            excess = size(reply) - limit
            if excess <= 0:
                return reply, bounded.dropped_evidence
            budget = max(budget - excess - NOTES_MARGIN, budget // 2)  # the notes took more room than bound left
        # A last resort (the notes are capped, so the rounds above fit): the client is told what was cut instead.
        dropped = tuple(dict.fromkeys(evidence_ids(data)))
        return self._with_notes(
            BoundedResult({}, (f"the whole result: {size(data)} characters",), dropped), session, pushed_out
        ), dropped

    def _with_notes(
        self, bounded: BoundedResult, session: LedgerSession, pushed_out: tuple[str, ...]
    ) -> dict[str, Any]:
        notes: dict[str, Any] = {}
        if bounded.truncated:
            notes["truncation"] = {
                "limit_chars": self.options.max_result_chars,
                "cut": list(bounded.cuts[:NAMED_CUTS]),
                "cut_more": max(0, len(bounded.cuts) - NAMED_CUTS),
                "evidence_not_citable": list(bounded.dropped_evidence[:NAMED_CUT_EVIDENCE]),
                "evidence_not_citable_more": max(0, len(bounded.dropped_evidence) - NAMED_CUT_EVIDENCE),
                "hint": "Ask for fewer items (a smaller limit or fewer ids) to get them whole.",
            }
        if pushed_out:
            notes["ledger"] = {
                "capacity": session.capacity,
                "dropped_oldest": len(pushed_out),
                "hint": "The oldest evidence read in this connection can no longer be cited; fetch it again if needed.",
            }
        data = bounded.data if isinstance(bounded.data, dict) else {"result": bounded.data}
        return {**data, **notes}


def _error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


def _mcp_tool(name: str, tool: Tool[Any, Any]) -> types.Tool:
    writes = tool.writes
    annotations = types.ToolAnnotations(
        title=tool.title,
        readOnlyHint=not writes,
        destructiveHint=writes,
        idempotentHint=not writes,
        openWorldHint=False,
    )
    return types.Tool(
        name=name,
        title=tool.title,
        description=tool.description,
        inputSchema=tool.input_model.model_json_schema(),
        annotations=annotations,
    )
