"""The calls the fuzz suite sends: HTTP requests built from an OpenAPI operation, MCP tool arguments, and the ids of
the real corpus they draw from so that most calls reach the code behind the validation.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support.fuzz_server import Caller, FuzzServer
from tests.support.hostile_values import HOSTILE_STRINGS, RAW_BODIES, pick
from tests.support.reply_audit import excerpt
from tests.support.schema_fuzz import SchemaFuzz, as_query_values, weighted

QUESTIONS = ("Who wrote the Orion Planner?", "Orion Planner", "Maria Chen", "What caused the replanning storm in Lyon?")
NO_BODY: Any = object()
MAX_URL_VALUE = 4000  # httpx refuses a URL over 64 KiB; a value of a path or query is cut to this


@dataclass
class Pools:
    """Values of the real data dir that a field of a given name may take, so fuzzed calls find things."""

    documents: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    sessions: dict[str, list[str]] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)
    merges: list[str] = field(default_factory=list)
    folder: str = "acme_notes"

    @classmethod
    def gather(cls, server: FuzzServer) -> Pools:
        """Read the documents, some evidence and entities, the runs and the merge log; open a session a caller."""
        pools = cls(folder=str(server.files_root / "acme_notes"))
        with httpx.Client(base_url=server.url, headers=server.admin.headers, timeout=60) as admin:
            pools.documents = [d["id"] for d in _ok(admin.get("/v1/documents"))]
            log = _ok(admin.get("/v1/merges"))
            pools.merges = [e[k] for e in log[:3] for k in ("id", "member_id")]
        pools.refresh(server)
        for caller in server.callers:
            with httpx.Client(base_url=server.url, headers=caller.headers, timeout=60) as client:
                session = pools.sessions[caller.name][0]
                found = _ok(client.post(f"/v1/sessions/{session}/discover", json={"query": QUESTIONS[0], "limit": 4}))
                pools.evidence += [hit["id"] for hit in found["hits"]]
                named = _ok(client.post(f"/v1/sessions/{session}/find_entities", json={"query": "Orion", "limit": 3}))
                pools.entities += [e[k] for e in named for k in ("id", "name")]
        chunk = pools.evidence[0]
        base = chunk.rsplit(".", 1)[0]
        pools.evidence += [f"{base}.s0-20", f"{base}.s5-2", f"{base}.s0-{10**20}", f"{base}.c{2**64}", f"{chunk}x"]
        return pools

    def refresh(self, server: FuzzServer) -> None:
        """Open a session for each caller whose session is gone (a fuzzed DELETE ends them); read the runs."""
        for caller in server.callers:
            with httpx.Client(base_url=server.url, headers=caller.headers, timeout=60) as client:
                kept = [s for s in self.sessions.get(caller.name, []) if client.get(f"/v1/sessions/{s}").is_success]
                self.sessions[caller.name] = kept or [_ok(client.post("/v1/sessions", json={}))["id"]]
        with httpx.Client(base_url=server.url, headers=server.admin.headers, timeout=60) as admin:
            self.runs = [r["id"] for r in _ok(admin.get("/v1/ingestions"))][:5]

    def hints(self, name: str) -> Sequence[str]:
        """The fair strings of a field called ``name`` (a list's item name: ``document_ids`` -> ``document_id``)."""
        cited = [f"Maria Chen wrote the Orion Planner [{e}]." for e in self.evidence[:3]]
        table: dict[str, Sequence[str]] = {
            "document_id": self.documents,
            "document": ["fuzz-note", "meeting-2026-11-30", *self.documents[:2]],
            "id": self.evidence,
            "fetched": self.evidence,
            "entity": self.entities,
            "query": QUESTIONS,
            "question": QUESTIONS,
            "answer": cited,
            "folder": ["acme_notes", self.folder, "acme_notes/../acme_notes"],
            "file": ["team.md", "acme_notes/team.md", "*.md", "acme_notes/**/*.md"],
            "path": ["team.md", "acme_notes/team.md", "*.md", "acme_notes/**/*.md", "acme_notes"],
            "label": ["Name", "Topic", "Person", "Vendor"],
            "relation_type": ["RELATED_TO", "WORKS_AT"],
            "recipe": ["hybrid", "chunk", "multi_hop", "graph_expand", "thematic", "text2cypher", "entity"],
            "text": ["# Fuzz note\n\nMaria Chen reviewed the Orion Planner.\n"],
            "key": self.merges,
            "session_id": [s for ids in self.sessions.values() for s in ids],
            "run_id": self.runs,
        }
        return table.get(name, ())


def _ok(response: httpx.Response) -> Any:
    """The JSON of a reply the suite needs (it cannot fuzz deep without it)."""
    request = response.request
    assert response.is_success, f"{request.method} {request.url}: {response.status_code} {response.text}"
    return response.json()


@dataclass(frozen=True)
class HttpCall:
    """One request: who sends it, the method and path (parameters filled in), the query and the body."""

    caller: Caller
    method: str
    path: str
    params: tuple[tuple[str, str], ...] = ()
    body: Any = NO_BODY

    def send(self, client: httpx.Client) -> httpx.Response:
        """Send it with the caller's token."""
        query = "&".join(f"{_quoted(name)}={_quoted(value)}" for name, value in self.params)
        kwargs: dict[str, Any] = {"headers": self.caller.headers}
        if self.body is not NO_BODY:
            # Encoded here: httpx's json= refuses NaN and lone surrogates, which a hostile client sends as escapes.
            raw = self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()
            kwargs["content"] = raw
            kwargs["headers"] = {**self.caller.headers, "content-type": "application/json"}
        return client.request(self.method, f"{self.path}?{query}" if query else self.path, **kwargs)

    def describe(self) -> str:
        """The request in one line, long values cut."""
        body = "" if self.body is NO_BODY else f" body={excerpt(str(self.body), 300)}"
        query = f" query={excerpt(str(list(self.params)), 200)}" if self.params else ""
        return f"{self.method} {excerpt(self.path, 200)}{query}{body}"


def http_calls(
    fuzz: SchemaFuzz,
    operation: Mapping[str, Any],
    *,
    method: str,
    path: str,
    pools: Pools,
    callers: Sequence[Caller],
) -> st.SearchStrategy[HttpCall]:
    """Requests for one OpenAPI operation: fair ones mostly, broken ones (wrong types, raw bodies) sometimes."""

    @st.composite
    def calls(draw: st.DrawFn) -> HttpCall:
        caller = draw(st.sampled_from(callers[:1] * 2 + callers[1:]))  # the admin reaches the admin routes
        broken = draw(st.integers(0, 4)) == 0
        filled, params = path, []
        for parameter in operation.get("parameters", ()):
            name, schema = parameter["name"], parameter.get("schema", {})
            if parameter["in"] == "path":
                own = pools.sessions.get(caller.name, []) if name == "session_id" else pools.hints(name)
                fuzzed = fuzz.value(schema, name, broken=broken)
                value = draw(weighted((3, pick(list(own))), (1, fuzzed)) if own else fuzzed)
                segment = _quoted(str(value)[:MAX_URL_VALUE]) or "%20"
                filled = filled.replace("{" + name + "}", segment)
            elif parameter["in"] == "query" and (parameter.get("required") or draw(st.integers(0, 3)) > 0):
                value = draw(fuzz.value(schema, name, broken=broken))
                params += [(name, text[:MAX_URL_VALUE]) for text in as_query_values(value)]
        if draw(st.integers(0, 9)) == 0:
            params.append((draw(st.sampled_from(("x", "offset", "limit", "overrides"))), draw(_query_noise)))
        body = NO_BODY
        content = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if content is not None:
            if draw(st.integers(0, 19)) == 0:
                body = draw(pick(RAW_BODIES))
            else:
                body = draw(fuzz.value(content["schema"], broken=broken))
        return HttpCall(caller, method, filled, tuple(params), body)

    return calls()


def _quoted(text: str) -> str:
    """``text`` percent-encoded for a path segment or a query value; a lone surrogate as the bytes it stands for."""
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


_query_noise = pick((*HOSTILE_STRINGS, "10000", str(10**20), "-1", "1e3", "0x10", ""))


@dataclass(frozen=True)
class ToolCall:
    """One MCP tool call: who makes it, the tool and its arguments."""

    caller: Caller
    tool: str
    arguments: dict[str, Any]

    def describe(self) -> str:
        """The call in one line, long values cut."""
        return f"{self.tool}({excerpt(str(self.arguments), 400)})"


def tool_calls(
    fuzz: SchemaFuzz, schema: Mapping[str, Any], tool: str, callers: Sequence[Caller]
) -> st.SearchStrategy[ToolCall]:
    """Calls of one tool with arguments from its input schema: fair mostly, broken (wrong types) sometimes."""
    arguments = weighted((4, fuzz.value(schema)), (1, fuzz.value(schema, broken=True))).filter(_sdk_can_send)
    return st.builds(ToolCall, st.sampled_from(callers[:1] * 2 + callers[1:]), st.just(tool), arguments)


def _sdk_can_send(arguments: Any) -> bool:
    """Arguments the SDK's client can send: an object without lone surrogates (httpx encodes them as UTF-8 and fails
    before sending, so the call would only time out; the HTTP routes, made from the same tools, get them as escapes).
    """
    if not isinstance(arguments, dict):
        return False
    try:
        json.dumps(arguments, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@asynccontextmanager
async def mcp_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    """An initialized MCP SDK client session on ``url``'s ``/mcp`` with a bearer token; tools listed."""
    async with (
        httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()  # the client then checks each result against the tool's output schema
        yield session
