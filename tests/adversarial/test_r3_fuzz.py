"""Fuzzing every HTTP route and MCP tool of a real `agrag serve` in a child process (issue 43, round 3).

The server (``tests/support/fuzz_server.py``) runs `agrag serve --allow-write` on an ingested copy of the example
corpus, with a files root, an admin token, a token scoped to two documents, an LLM API key and a canary variable in
its environment, so a segfault is a dead child the suite reports, not a dead pytest. Hypothesis builds the calls from
the server's own schemas: every operation of ``/openapi.json`` (path, query and body) and every tool the MCP SDK's
client lists at ``/mcp`` (``tests/support/schema_fuzz.py``), mixing fair values and ids of the corpus with hostile
ones: OmegaConf interpolations naming the server's variables, override strings, NUL and other controls, bidi
overrides, lone surrogates, integers past 32 and 64 bits, negative numbers, long strings, paths out of the files
root, and bodies that are not JSON (``tests/support/hostile_values.py``). Each call goes as the admin or as the
scoped token. ``PROBES`` are known hostile calls (the probe's of issue 43 and what this suite found) sent first on
every run, whatever the generator draws.

After every call (``tests/support/reply_audit.py``): no status of 500 or more but the documented ones (503 not
ready, 502 from ``/v1/ask`` without an LLM), an error is the typed one-line JSON body, no traceback, no value of the
server's environment in any reply (what counts as one: ``FuzzServer``), and the server is alive; a dead server is
started again for the next route. A test collects every kind of failure of its route or tool with the first input
that showed it and fails once at the end with the whole list, so one run lists all of them.

Bounded: the examples are derandomized (the same calls on every run), never shrunk (a crash would need a restart per
step; the failing call is printed as sent) and counted per route or tool (``EXAMPLES_OF``: 20 for a read, 8 for a
write, 3-10 for the cheap ones: 712 over 53 routes and tools, fewer sent, as equal draws are sent once). Writes come
after the reads, and the paged listings last.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from prefect.settings import PREFECT_API_URL

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.runtime import open_runtime
from tests.conftest import EXAMPLES
from tests.support.fuzz_calls import NO_BODY, HttpCall, Pools, ToolCall, http_calls, tool_calls
from tests.support.fuzz_run import RouteFuzz, ToolFuzz, run_examples
from tests.support.fuzz_server import FuzzServer
from tests.support.hostile_values import CANARY_NAME
from tests.support.isolated_settings import isolated_settings
from tests.support.reply_audit import Findings
from tests.support.schema_fuzz import SchemaFuzz

pytestmark = [pytest.mark.slow, pytest.mark.needs_model, pytest.mark.needs_prefect]

SCOPE = tuple(document_id_for(name, "acme_notes") for name in ("team.md", "sites.csv"))
READ, WRITE = 20, 8
HTTP_READS = {
    "POST /v1/search": READ,
    "GET /v1/status": 8,
    "GET /v1/documents": READ,
    "GET /v1/ontology": READ,
    "POST /v1/sessions": READ,
    "GET /v1/sessions/{session_id}": 10,
    "POST /v1/sessions/{session_id}/discover": READ,
    "POST /v1/sessions/{session_id}/fetch": READ,
    "POST /v1/sessions/{session_id}/navigate": READ,
    "POST /v1/sessions/{session_id}/find_entities": READ,
    "POST /v1/sessions/{session_id}/explore": READ,
    "POST /v1/sessions/{session_id}/check_citations": READ,
    "POST /v1/sessions/{session_id}/render_citations": READ,
    "POST /v1/sessions/{session_id}/search_evidence": READ,
    "DELETE /v1/sessions/{session_id}": 10,
    "GET /v1/tools": 5,
    "GET /v1/config": READ,
    "GET /v1/ingestions": 10,
    "GET /v1/ingestions/{run_id}": 10,
    "GET /v1/merges": 5,
    "GET /v1/merges/candidates": 5,
    "POST /v1/files/preview": READ,
    "POST /v1/ask": 10,
    "GET /healthz": 3,
    "GET /readyz": 3,
    "GET /docs": 3,
    "GET /redoc": 3,
    "GET /openapi.json": 3,
}
HTTP_WRITES = {
    "POST /v1/ontology": WRITE,
    "POST /v1/merges/{key}/undo": WRITE,
    "POST /v1/ingestions": WRITE,
    "POST /v1/ingestions/{run_id}/cancel": WRITE,
    "POST /v1/reextractions": WRITE,
    "POST /v1/finalize": WRITE,
    "POST /v1/texts": WRITE,
    "POST /v1/documents/{document_id}/delete": WRITE,
}
MCP_READS = {
    name: READ
    for name in (
        "search_evidence",
        "fetch_evidence",
        "navigate",
        "find_entities",
        "explore",
        "check_citations",
        "render_citations",
        "search",
        "status",
        "get_ontology",
        "list_documents",
        "preview_files",
    )
}
MCP_WRITES = {name: WRITE for name in ("set_ontology", "reextract", "finalize", "ingest", "delete_document")}
PAGES = ("GET /docs", "GET /redoc", "GET /openapi.json")  # served, not in the OpenAPI document
# The paged listings go last: on the code of issue 43 a crash of theirs would need a restart for what follows.
PAGED = ("http GET /v1/documents", "mcp list_documents")
TARGETS = [
    target
    for target in (
        *[f"http {route}" for route in HTTP_READS],
        *[f"mcp {tool}" for tool in MCP_READS],
        *[f"http {route}" for route in HTTP_WRITES],
        *[f"mcp {tool}" for tool in MCP_WRITES],
    )
    if target not in PAGED
] + list(PAGED)
EXAMPLES_OF = {f"http {k}": v for k, v in {**HTTP_READS, **HTTP_WRITES}.items()}
EXAMPLES_OF |= {f"mcp {k}": v for k, v in {**MCP_READS, **MCP_WRITES}.items()}
QUESTION = "Who wrote the Orion Planner?"
CANARY = f"${{oc.env:{CANARY_NAME}}}"
LONG_OVERRIDE = "A" * 300  # a bare word is a config group to Hydra: looked up as conf/AAA...A.yaml


@dataclass(frozen=True)
class Probe:
    """A known hostile call, sent before the generated ones on every run: ``spec`` is the query (``params``) and
    body (``body``) of a route, or the arguments of a tool."""

    target: str
    caller: str
    spec: dict[str, Any]
    why: str


PROBES = (
    # Issue 43 defect 1: request overrides evaluate OmegaConf resolvers (the probe read the tokens and the LLM key).
    Probe(
        "http POST /v1/search",
        "team",
        {"body": {"query": QUESTION, "overrides": ["recipe.limit=${oc.env:AGRAG_API_TOKENS}"]}},
        "defect 1",
    ),
    Probe(
        "http POST /v1/search",
        "admin",
        {"body": {"query": QUESTION, "overrides": ["recipe.limit=${oc.env:AGRAG_LLM_API_KEY}"]}},
        "defect 1",
    ),
    Probe("http GET /v1/config", "admin", {"params": [("overrides", "recipe.description=${oc.env:HOME}")]}, "defect 1"),
    Probe("http GET /v1/ontology", "team", {"params": [("overrides", f"ingest.ontology.name={CANARY}")]}, "defect 1"),
    Probe(
        "http POST /v1/ingestions",
        "admin",
        {"body": {"folder": "acme_notes", "overrides": [f"ingest.write_batch_chunks={CANARY}"]}},
        "defect 1",
    ),
    Probe(
        "http POST /v1/texts",
        "admin",
        {
            "body": {
                "text": "# Probe\n\nA note.\n",
                "document_id": "probe-note",
                "overrides": ["ingest.max_llm_calls=${oc.env:AGRAG_LLM_API_KEY}"],
            }
        },
        "defect 1",
    ),
    Probe("mcp get_ontology", "admin", {"overrides": ["ingest.ontology.name=${oc.env:HOME}"]}, "defect 1"),
    Probe("mcp get_ontology", "admin", {"overrides": ["ingest.ontology.name=${oc.env:PATH}"]}, "defect 1"),
    Probe(
        "mcp set_ontology",
        "admin",
        {"labels": [{"label": "Vendor"}], "overrides": [f"ingest.ontology.name={CANARY}"]},
        "defect 1",
    ),
    # Issue 43 defect 8: an override that reads a file outside the files root.
    Probe(
        "http POST /v1/ingestions",
        "admin",
        {
            "body": {
                "folder": "acme_notes",
                "overrides": ["ingest/extractor=triples", "ingest.extractor.path=/etc/passwd"],
            }
        },
        "defect 8",
    ),
    # Issue 43 defect 2: offsets past the end (SIGSEGV) and past 64 bits (500).
    Probe("http GET /v1/documents", "admin", {"params": [("offset", str(10**20))]}, "defect 2"),
    Probe("http GET /v1/documents", "team", {"params": [("offset", "10000")]}, "defect 2"),
    Probe("http GET /v1/documents", "admin", {"params": [("offset", str(10**9))]}, "defect 2"),
    Probe("mcp list_documents", "team", {"offset": 10**20}, "defect 2"),
    Probe("mcp list_documents", "team", {"offset": 10000}, "defect 2"),
    # Found by this suite: an inline recipe naming a method twice (500, Haystack's duplicate component name).
    Probe(
        "http POST /v1/search",
        "admin",
        {"body": {"query": QUESTION, "recipe": {"methods": ["chunk", "chunk"]}}},
        "fuzz A",
    ),
    Probe("mcp search", "admin", {"query": QUESTION, "recipe": {"methods": ["entity", "entity"]}}, "fuzz A"),
    # Found by this suite: a long bare override is looked up as a config file (500, OSError ENAMETOOLONG).
    Probe("http GET /v1/config", "admin", {"params": [("overrides", LONG_OVERRIDE)]}, "fuzz B"),
    Probe("http GET /v1/ontology", "team", {"params": [("overrides", LONG_OVERRIDE)]}, "fuzz B"),
    Probe(
        "http POST /v1/ontology",
        "admin",
        {"body": {"labels": [{"label": "Vendor"}], "overrides": [LONG_OVERRIDE]}},
        "fuzz B",
    ),
    Probe("mcp get_ontology", "team", {"overrides": [LONG_OVERRIDE]}, "fuzz B"),
    # Found by this suite: a lone surrogate (JSON escape \udcff) in a document id reaches Kùzu (500, StoreError).
    Probe("http POST /v1/ask", "admin", {"body": {"question": QUESTION, "documents": ["\udcff"]}}, "fuzz C"),
    Probe("http POST /v1/sessions", "admin", {"body": {"documents": ["\udcff"]}}, "fuzz C"),
    Probe(
        "http POST /v1/search",
        "admin",
        {"body": {"query": QUESTION, "filters": {"document_ids": ["\udcff"]}}},
        "fuzz C",
    ),
)


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Iterator[FuzzServer]:
    """`agrag serve` in a child process over the example corpus, ingested here, with its files under a files root."""
    root = tmp_path_factory.mktemp("fuzz")
    files_root = root / "files"
    shutil.copytree(EXAMPLES, files_root / "acme_notes")
    data_dir = root / "data"
    began = time.monotonic()
    with open_runtime([], isolated_settings(data_dir), require_data=False, embedder=embedder) as runtime:
        ingest_into(str(files_root / "acme_notes"), runtime.config, runtime.store, embedder)
    (root / "work").mkdir()
    served = FuzzServer(data_dir, files_root, root / "work", SCOPE, str(PREFECT_API_URL.value()))
    ingested = time.monotonic()
    served.start()
    print(f"fuzz server: corpus ingested in {ingested - began:.1f} s, server ready {time.monotonic() - ingested:.1f} s")
    try:
        yield served
    finally:
        served.stop()
        # For the report: what the server logged with a traceback (the calls that failed say which of them).
        for line, count in served.logged_exceptions().most_common():
            print(f"server log: {count}x {line}")


@pytest.fixture(scope="module")
def openapi(server: FuzzServer) -> dict[str, Any]:
    """The server's OpenAPI document."""
    document: dict[str, Any] = httpx.get(f"{server.url}/openapi.json", timeout=30).json()
    return document


def test_the_suite_fuzzes_every_route_and_tool(server: FuzzServer, openapi: dict[str, Any]) -> None:
    operations = {f"{method.upper()} {path}" for path, item in openapi["paths"].items() for method in item}
    fuzzed = {target.split(" ", 1)[1] for target in TARGETS if target.startswith("http ")}
    assert operations | set(PAGES) == fuzzed, "routes not fuzzed, or fuzzed but gone: add them to HTTP_READS/WRITES"
    with ToolFuzz(server, "status", Findings()) as mcp:
        tools = {tool.name for tool in mcp.portal.call(mcp.sessions["admin"].list_tools).tools}
    assert tools == {target.split(" ", 1)[1] for target in TARGETS if target.startswith("mcp ")}
    assert {probe.target for probe in PROBES} <= set(TARGETS)


@pytest.mark.parametrize("target", TARGETS)
def test_hostile_input_gets_no_server_error_no_crash_and_no_secret(
    target: str, server: FuzzServer, openapi: dict[str, Any]
) -> None:
    server.ensure()
    pools = _pools(server)
    findings = Findings()
    started = time.monotonic()
    callers = {caller.name: caller for caller in server.callers}
    kind, name = target.split(" ", 1)
    probes = [probe for probe in PROBES if probe.target == target]
    if kind == "http":
        method, path = name.split(" ", 1)
        operation = openapi["paths"].get(path, {}).get(method.lower(), {})
        calls = http_calls(
            SchemaFuzz(openapi, pools.hints), operation, method=method, path=path, pools=pools, callers=server.callers
        )
        explicit = [
            HttpCall(callers[p.caller], method, path, tuple(p.spec.get("params", ())), p.spec.get("body", NO_BODY))
            for p in probes
        ]
        with RouteFuzz(server, name, findings) as route:
            run_examples(calls, EXAMPLES_OF[target], route.check, explicit)
    else:
        with ToolFuzz(server, name, findings) as tool:
            schema = tool.input_schema()
            explicit_calls = [ToolCall(callers[p.caller], name, p.spec) for p in probes]
            strategy = tool_calls(SchemaFuzz(schema, pools.hints), schema, name, server.callers)
            run_examples(strategy, EXAMPLES_OF[target], tool.check, explicit_calls)
    outcomes = dict(sorted(findings.outcomes.items()))
    slowest, call = findings.slowest
    took = time.monotonic() - started
    print(f"{target}: {EXAMPLES_OF[target]} examples in {took:.1f} s, {outcomes}, slowest {slowest:.1f} s: {call}")
    assert not findings, findings.report()


_POOLS: dict[tuple[int, int], Pools] = {}


def _pools(server: FuzzServer) -> Pools:
    """The pools of the server's current process (gathered once per start), its sessions and runs refreshed."""
    key = (id(server), server.starts)
    if key not in _POOLS:
        _POOLS[key] = Pools.gather(server)
    else:
        _POOLS[key].refresh(server)
    return _POOLS[key]
