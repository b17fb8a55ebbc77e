"""The shared tool definitions as Haystack ``Tool``s, run inside one evidence session, each call traced.

The agent offers the model the MCP server's read tools for evidence, under the same names, with the same JSON
schemas (from the pydantic input models) and descriptions. ``ToolRunner`` runs a call in the run's evidence
session, bounds its result as the MCP server does, records it, and enforces the run's tool-call budget and
deadline. A refused call (bad arguments, an id outside the scope) comes back to the model as an error it can fix.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from haystack.tools.tool import Tool as HaystackTool
from pydantic import ValidationError

from agrag.components.errors import AgragError
from agrag.service.agent.answer import AgentLimits, Caller, ToolCallRecord
from agrag.service.mcp.bounded_result import bound
from agrag.service.mcp.ledger import LedgerSession
from agrag.service.tools.registry import MCP_READ_TOOLS
from agrag.service.tools.tool import Tool, ToolContext

AGENT_TOOL_NAMES = (
    "search_evidence",
    "fetch_evidence",
    "navigate",
    "find_entities",
    "explore",
    "check_citations",
)
"""The tools the model may call, by their MCP names (the loop renders the final answer itself)."""

OnCall = Callable[[ToolCallRecord], None]


class ToolRunner:
    """Runs the shared tools for one agent run: its evidence session, its budget, its trace.

    Usage:
        ```python
        runner = ToolRunner(ToolContext(host, scope, session), limits, deadline)
        agent = Agent(chat_generator=generator, tools=runner.haystack_tools())
        ```
    """

    def __init__(
        self, context: ToolContext, limits: AgentLimits, deadline: float, on_call: OnCall | None = None
    ) -> None:
        """Run calls in ``context`` until ``limits.max_tool_calls`` model calls or the ``deadline`` (monotonic)."""
        self.context = context
        self.limits = limits
        self.deadline = deadline
        self.trace: list[ToolCallRecord] = []
        self.limit_hit = False
        self.cancelled = threading.Event()
        self._on_call = on_call
        self._lock = threading.Lock()

    @property
    def model_calls(self) -> int:
        """Tool calls the model made so far."""
        return sum(1 for record in self.trace if record.caller is Caller.MODEL)

    def haystack_tools(self) -> list[HaystackTool]:
        """The agent's tools, as Haystack tools that call ``run``."""
        return [_haystack_tool(name, MCP_READ_TOOLS[name], self) for name in AGENT_TOOL_NAMES]

    def call(self, name: str, arguments: dict[str, Any], caller: Caller = Caller.MODEL) -> str:
        """Run tool ``name`` with ``arguments``; its result as JSON text for the model (an error is JSON too)."""
        with self._lock:  # one call at a time: the session's ledger and the trace stay in call order
            if self.cancelled.is_set() or time.monotonic() > self.deadline:
                return _error("The time limit of this question was reached; answer with what you have read.")
            if caller is Caller.MODEL and self.model_calls >= self.limits.max_tool_calls:
                self.limit_hit = True
                return _error(f"The limit of {self.limits.max_tool_calls} tool calls was reached; no more calls.")
            started = time.perf_counter()
            text, ok = self._run(MCP_READ_TOOLS[name], arguments)
            record = ToolCallRecord(name, dict(arguments), text, time.perf_counter() - started, ok, caller)
            self.trace.append(record)
        if self._on_call is not None:
            self._on_call(record)
        return text

    def run_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run a tool for the loop itself (traced, outside the model's budget); its output, unbounded.

        Raises:
            AgragError: the tool refused the call.
        """
        tool = MCP_READ_TOOLS[name]
        started = time.perf_counter()
        output = tool.run(self.context, arguments)
        text = json.dumps(tool.dump(output), ensure_ascii=False)
        record = ToolCallRecord(name, dict(arguments), text, time.perf_counter() - started, True, Caller.LOOP)
        with self._lock:
            self.trace.append(record)
        if self._on_call is not None:
            self._on_call(record)
        return output

    def _run(self, tool: Tool[Any, Any], arguments: dict[str, Any]) -> tuple[str, bool]:
        try:
            output = tool.run(self.context, arguments)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
            return _error(f"Invalid arguments for {tool.name}: {problems}"), False
        except AgragError as exc:  # the caller's mistake or a known failure: its message says how to fix it
            return _error(str(exc)), False
        bounded = bound(tool.dump(output), self.limits.max_result_chars)
        session = self.context.session
        if bounded.dropped_evidence and isinstance(session, LedgerSession):
            session.forget(bounded.dropped_evidence)  # the model never read them whole: they cannot be cited
        data = bounded.data
        if bounded.truncated:
            note = {"cut": list(bounded.cuts), "hint": "Ask for fewer items to get them whole."}
            data = {**data, "truncation": note} if isinstance(data, dict) else {"result": data, "truncation": note}
        return json.dumps(data, ensure_ascii=False), True


def _haystack_tool(name: str, tool: Tool[Any, Any], runner: ToolRunner) -> HaystackTool:
    def invoke(**arguments: Any) -> str:
        return runner.call(name, arguments)

    return HaystackTool(
        name=name,
        description=tool.description,
        parameters=tool.input_model.model_json_schema(),
        function=invoke,
    )


def _error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)
