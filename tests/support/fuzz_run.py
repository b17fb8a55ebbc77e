"""Running fuzzed calls against the ``FuzzServer`` and auditing each reply: one HTTP route or one MCP tool at a time.

``RouteFuzz`` and ``ToolFuzz`` send one call each time ``check`` is called (hypothesis calls it with each example),
record its outcome and whatever ``reply_audit`` finds, and stop sending once the server died: the crash is a finding
of the call that caused it, and the suite starts the server again for the next route or tool.
"""

from __future__ import annotations

import concurrent.futures
import functools
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, suppress
from datetime import timedelta
from typing import Any, TypeVar

import httpx
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from mcp import ClientSession, types
from mcp.shared.exceptions import McpError

from tests.support.fuzz_calls import HttpCall, ToolCall, mcp_session
from tests.support.fuzz_server import Caller, FuzzServer
from tests.support.reply_audit import Finding, Findings, excerpt, http_problems, mcp_problems

CALL_SECONDS = 30
INTERNAL_ERROR = -32603  # JSON-RPC: the server failed (invalid params and the like are the caller's)
T = TypeVar("T")


def run_examples(strategy: st.SearchStrategy[T], count: int, check: Callable[[T], None], explicit: Sequence[T]) -> None:
    """``check`` the ``explicit`` examples, then ``count`` derandomized ones of ``strategy``; no shrinking.

    Shrinking would resend variations of a failing call, and after a crash every one would need a new server; the
    failing call is reported as it was sent.
    """

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def run(call: T) -> None:
        check(call)

    for known in reversed(explicit):  # decorators apply inside out: the first of the list runs first
        run = example(known)(run)
    run()


class RouteFuzz:
    """Sends the calls of one route (``"POST /v1/search"``) and audits each reply."""

    def __init__(self, server: FuzzServer, route: str, findings: Findings) -> None:
        self.server, self.route, self.findings = server, route, findings
        self.dead = False
        self._sent: set[str] = set()
        self._opened: list[tuple[Caller, str]] = []
        self._client = httpx.Client(base_url=server.url, timeout=CALL_SECONDS)

    def __enter__(self) -> RouteFuzz:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.dead:  # the sessions the fuzzing opened count against their tokens' limit
            for caller, session in self._opened:
                self._client.delete(f"/v1/sessions/{session}", headers=caller.headers)
        self._client.close()

    def check(self, call: HttpCall) -> None:
        """Send ``call`` (once: different draws can make the same call) and audit the reply."""
        if self.dead or repr(call) in self._sent:
            return
        self._sent.add(repr(call))
        mark, began = self.server.log_mark(), time.monotonic()
        try:
            response = call.send(self._client)
        except httpx.InvalidURL:
            return  # refused by the client (a URL over 64 KiB), never sent
        except httpx.TimeoutException:
            reply = f"no reply within {CALL_SECONDS} s"
            self.findings.add(Finding("timeout", self.route, call.caller.name, call.describe(), reply))
            self._crashed(Finding("crash", self.route, call.caller.name, call.describe(), reply))
            return
        except httpx.TransportError as exc:
            reply = f"{type(exc).__name__}: {exc}"
            if not self._crashed(Finding("crash", self.route, call.caller.name, call.describe(), reply)):
                dropped = Finding("dropped connection", self.route, call.caller.name, call.describe(), reply)
                self.findings.add(dropped, type(exc).__name__)
            return
        self.findings.timed(time.monotonic() - began, call.describe())
        self._audit(call, response, mark)
        if response.status_code >= 500:
            # uvicorn closes a connection after an unhandled exception: the next call gets a new one.
            self._client.close()
            self._client = httpx.Client(base_url=self.server.url, timeout=CALL_SECONDS)
        elif self.server.process.poll() is None:
            return
        reply = f"{response.status_code} {excerpt(response.text)}"
        self._crashed(Finding("crash", self.route, call.caller.name, call.describe(), reply))

    def _crashed(self, crash: Finding) -> bool:
        """Whether the server died (recorded as ``crash``, with how it ended)."""
        found = check_alive(self.server, crash)
        if found is not None:
            self.findings.add(found)
            self.dead = True
        return found is not None

    def _audit(self, call: HttpCall, response: httpx.Response, mark: int) -> None:
        self.findings.outcomes[str(response.status_code)] += 1
        if self.route == "POST /v1/sessions" and response.is_success:
            self._opened.append((call.caller, response.json()["id"]))
        reply = f"{response.status_code} {excerpt(response.text)}"
        if response.status_code >= 500:
            reply += f" [server log: {self.server.last_traceback(mark)}]"
        for problem, signature in http_problems(self.route, response, self.server.secrets):
            self.findings.add(Finding(problem, self.route, call.caller.name, call.describe(), reply), signature)


class ToolFuzz:
    """Calls one MCP tool through the SDK's client, a session per caller, and audits each result."""

    def __init__(self, server: FuzzServer, tool: str, findings: Findings) -> None:
        self.server, self.tool, self.findings = server, tool, findings
        self.where = f"tool {tool}"
        self.dead = False
        self._stack = ExitStack()
        self.portal = self._stack.enter_context(start_blocking_portal())
        self.sessions = self._stack.enter_context(_sessions(self.portal, server))

    def __enter__(self) -> ToolFuzz:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def input_schema(self) -> dict[str, Any]:
        """The tool's input schema, as the SDK's client lists it."""
        listed = self.portal.call(self.sessions["admin"].list_tools)
        return next(dict(tool.inputSchema) for tool in listed.tools if tool.name == self.tool)

    def check(self, call: ToolCall) -> None:
        """Call the tool with ``call``'s arguments and audit the result."""
        if self.dead:
            return
        session = self.sessions[call.caller.name]
        timeout = timedelta(seconds=CALL_SECONDS)
        call_tool = functools.partial(session.call_tool, self.tool, call.arguments, read_timeout_seconds=timeout)
        mark, began = self.server.log_mark(), time.monotonic()
        try:
            result = _while_alive(self.portal, self.server, call_tool)
        except McpError as exc:
            self.findings.outcomes[f"rpc {exc.error.code}"] += 1
            reply = f"JSON-RPC error {exc.error.code}: {excerpt(exc.error.message)}"
            if exc.error.code != INTERNAL_ERROR and "Timed out" not in exc.error.message:
                return
            self.findings.add(Finding("server error", self.where, call.caller.name, call.describe(), reply), reply[:40])
        except Exception as exc:  # the SDK client: a transport failure, a result against the output schema
            self.findings.outcomes[type(exc).__name__] += 1
            reply = f"{type(exc).__name__}: {excerpt(str(exc))}"
            kind = "client error" if self.server.process.poll() is None else "no reply"
            self.findings.add(Finding(kind, self.where, call.caller.name, call.describe(), reply), type(exc).__name__)
        else:
            self.findings.timed(time.monotonic() - began, call.describe())
            reply = self._audit(call, result, mark)
            if not reply and self.server.process.poll() is None:
                return
        found = check_alive(self.server, Finding("crash", self.where, call.caller.name, call.describe(), reply))
        if found is not None:
            self.findings.add(found)
            self.dead = True

    def _audit(self, call: ToolCall, result: types.CallToolResult, mark: int) -> str:
        """Record the result's problems; the reply as reported ('' when it has none)."""
        self.findings.outcomes["error" if result.isError else "ok"] += 1
        problems = mcp_problems(result, self.server.secrets)
        if not problems:
            return ""
        text = " ".join(block.text for block in result.content if isinstance(block, types.TextContent))
        logged = self.server.last_traceback(mark)
        reply = f"{'error' if result.isError else 'ok'}: {excerpt(text)} [server log: {logged}]"
        for problem, signature in problems:
            self.findings.add(Finding(problem, self.where, call.caller.name, call.describe(), reply), signature)
        return reply


def check_alive(server: FuzzServer, crash: Finding) -> Finding | None:
    """After a call that failed: the crash, with how the server ended, if it exited or does not answer /healthz."""
    death = server.death()
    if death is None:
        return None
    return Finding("crash", crash.where, crash.caller, crash.request, f"{crash.reply} / {death}")


@contextmanager
def _sessions(portal: BlockingPortal, server: FuzzServer) -> Iterator[dict[str, ClientSession]]:
    """An MCP client session a caller; closed at the end even when the server died under them."""
    opened: list[AbstractContextManager[ClientSession]] = []
    try:
        sessions = {}
        for caller in server.callers:
            manager = portal.wrap_async_context_manager(mcp_session(server.url, caller.token))
            sessions[caller.name] = manager.__enter__()
            opened.append(manager)
        yield sessions
    finally:
        for manager in reversed(opened):
            with suppress(Exception):  # a connection to a server that died cannot close cleanly
                manager.__exit__(None, None, None)


def _while_alive(portal: BlockingPortal, server: FuzzServer, call: Callable[[], Awaitable[T]]) -> T:
    """``call`` in the portal; given up (ConnectionError) as soon as the server process is gone."""
    future = portal.start_task_soon(call)
    while True:
        try:
            return future.result(timeout=0.25)
        except concurrent.futures.TimeoutError:
            if server.process.poll() is not None:
                future.cancel()
                raise ConnectionError("the server process ended during the call") from None
