"""What the fuzz suite checks in every reply, and how it collects what it finds so one run lists everything.

Rules (the issue 43 fuzz suite):

* **No server fault**: no HTTP status of 500 or more, except 503 with ``NotReadyError`` or ``NothingIngestedError``
  (documented: not ready, nothing ingested) and 502 from ``POST /v1/ask`` (documented: the server has no LLM or the
  LLM failed). Over MCP, an error result of the kind ``Internal error``, ``Database error`` or ``Embedding error``
  (what the HTTP API answers with 500), a JSON-RPC internal error, or a transport failure.
* **No crash**: the server process is alive and ``/healthz`` answers after the call (``FuzzServer.death``).
* **No secret**: no value of the server's environment (``FuzzServer.secrets``) in the body, in any string of the
  JSON body (escapes undone) or in a header.
* **Typed errors**: a status of 400 or more has a JSON body ``{"error": str, "message": str}`` whose message is one
  line, and no reply holds a Python traceback.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from mcp import types

# 5xx answers the README documents: (status, error type) -> the routes that may give them ("*": every route).
ALLOWED_5XX: dict[tuple[int, str], str] = {
    (503, "NotReadyError"): "*",
    (503, "NothingIngestedError"): "*",
    **{(502, kind): "POST /v1/ask" for kind in ("AgentLLMNotConfiguredError", "AgentLLMError", "LLMError")},
}
MCP_FAULTS = ("Internal error", "Database error", "Embedding error")
EXCERPT = 400


@dataclass(frozen=True)
class Finding:
    """One kind of failure on one route or tool, with the first input that showed it."""

    kind: str
    where: str
    caller: str
    request: str
    reply: str

    def line(self) -> str:
        """One line for the report."""
        return f"[{self.kind}] {self.where} as {self.caller}: {self.request} -> {self.reply}"


@dataclass
class Findings:
    """The findings of one test, one per (kind, route, signature), each with how often it was seen."""

    seen: dict[tuple[str, str, str], Finding] = field(default_factory=dict)
    counts: dict[tuple[str, str, str], int] = field(default_factory=dict)
    outcomes: Counter[str] = field(default_factory=Counter)  # status codes, MCP ok/error: how deep the calls went
    slowest: tuple[float, str] = (0.0, "")

    def timed(self, seconds: float, call: str) -> None:
        """Keep the slowest call (shown with the outcomes; a call past the client's timeout is a finding)."""
        self.slowest = max(self.slowest, (seconds, call))

    def add(self, finding: Finding, signature: str = "") -> None:
        """Keep the first finding of its kind, route and signature (e.g. the status and error type); count it."""
        key = (finding.kind, finding.where, signature)
        self.seen.setdefault(key, finding)
        self.counts[key] = self.counts.get(key, 0) + 1

    def __bool__(self) -> bool:
        return bool(self.seen)

    def report(self) -> str:
        """Every finding, one a line, with its count."""
        lines = [f"{self.counts[key]}x {finding.line()}" for key, finding in self.seen.items()]
        return f"{len(lines)} kinds of failure:\n" + "\n".join(lines)


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """``text`` cut to ``limit`` characters, as its repr (controls visible)."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def strings_of(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from strings_of(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_of(item)


def parsed(text: str) -> list[Any]:
    """The JSON of a body: the whole text, or each line of NDJSON; what does not parse is left out."""
    try:
        return [json.loads(text)]
    except ValueError:
        values = []
        for line in text.splitlines():
            try:
                values.append(json.loads(line))
            except ValueError:
                continue
        return values


def leaked(texts: list[str], secrets: Mapping[str, str]) -> list[str]:
    """The names of the variables whose values appear in ``texts``."""
    return sorted({name for value, name in secrets.items() if any(value in text for text in texts)})


def http_problems(where: str, response: httpx.Response, secrets: Mapping[str, str]) -> list[tuple[str, str]]:
    """What is wrong with one HTTP reply: (kind, signature) pairs, empty when nothing is."""
    text = response.text
    values = parsed(text)
    texts = [text, *[s for v in values for s in strings_of(v)], *[f"{k}: {v}" for k, v in response.headers.items()]]
    problems: list[tuple[str, str]] = []
    body = values[0] if len(values) == 1 else None
    error = str(body.get("error")) if isinstance(body, dict) else ""
    status = response.status_code
    if status >= 500 and ALLOWED_5XX.get((status, error)) not in ("*", where):
        problems.append(("server error", f"{status} {error}"))
    if status >= 400 and not _typed(body):
        problems.append(("untyped error", str(status)))
    if "Traceback (most recent call last)" in text:
        problems.append(("traceback", str(status)))
    names = leaked(texts, secrets)
    if names:
        problems.append((f"leak of {', '.join(names)}", ""))
    return problems


def _typed(body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    error, message = body.get("error"), body.get("message")
    return isinstance(error, str) and isinstance(message, str) and "\n" not in message


def mcp_problems(result: types.CallToolResult, secrets: Mapping[str, str]) -> list[tuple[str, str]]:
    """What is wrong with one MCP tool result: (kind, signature) pairs, empty when nothing is."""
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    if result.structuredContent is not None:
        texts += [json.dumps(result.structuredContent, ensure_ascii=False), *strings_of(result.structuredContent)]
    problems: list[tuple[str, str]] = []
    first = texts[0] if texts else ""
    if result.isError and first.startswith(MCP_FAULTS):
        problems.append(("server error", first.split(":", 1)[0].split("(", 1)[0].strip()))
    if any("Traceback (most recent call last)" in text for text in texts):
        problems.append(("traceback", ""))
    names = leaked(texts, secrets)
    if names:
        problems.append((f"leak of {', '.join(names)}", ""))
    return problems
