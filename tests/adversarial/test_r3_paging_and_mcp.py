"""Paging and the MCP tool offer under hostile input (issue 43: defects 2, 7 and three MCP items of 9).

A real `agrag serve --allow-write` (a child process, so a crash of Kùzu fails a test instead of killing pytest)
serves a small ingested corpus on loopback with an unscoped token and a token limited to two documents; the MCP
tests use the SDK's own client over /mcp and over stdio (`agrag mcp`, in-process or forwarding to the server).
After every request the server must still be running.

- Defect 2: `GET /v1/documents?offset=10000` killed the server (SIGSEGV in Kùzu's ORDER BY ... SKIP ... LIMIT when
  the SKIP passes the last row by a whole sort block), as did MCP `list_documents` and `agrag documents`. A page
  past the end must be empty, an offset or limit out of range a typed 422, everywhere; a property test drives every
  paged route and tool with generated offsets and limits.
- Defect 7: `agrag mcp` forwarding to a server started with `--allow-write` offered and ran the write tools.
- Defect 9: MCP replies longer than their bound, `delete_document` of an unknown id queued a run, and a token
  limited to documents was offered the write tools.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from prefect.settings import PREFECT_API_URL

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.paging import MAX_OFFSET
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.runtime import open_runtime
from tests.conftest import EXAMPLES
from tests.service.mcp.conftest import call, refused, stdio_parameters, text_of
from tests.service.mcp.test_stdio import READ_TOOLS
from tests.service.server.test_serve_command import Serve, serve_env
from tests.support.data_dir_copy import copy_data_dir
from tests.support.isolated_settings import isolated_settings

AGRAG = str(Path(sys.executable).with_name("agrag"))
ROOT = Path(__file__).resolve().parents[2]
FOLDER = "notes"
NOTES = ("orion_planner.md", "team.md", "incidents.md", "sites.csv")
ADMIN = "admin-token-0123456789abcdef"
SCOPED = "scoped-token-0123456789abcde"
SCOPE = tuple(sorted(document_id_for(name, FOLDER) for name in ("team.md", "sites.csv")))
MAX_RESULT_CHARS = 20_000  # the served bound: a `search` of 1,000 results went past it by about 6 % before the fix
WRITE_TOOLS = {"ingest", "delete_document", "preview_files", "set_ontology", "reextract", "finalize"}
# Offsets that crashed the server before the fix (from the scoped token; 10,000 and more from any token).
CRASHING_OFFSETS = (9000, 9999, 10_000, 20_000, 1_000_000)
# A call the server never answers (it died under it) fails after this long instead of waiting forever.
CALL_TIMEOUT = timedelta(seconds=60)


@pytest.fixture(scope="module")
def corpus(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Path:
    """Four example notes, ingested once: the data dir the tests copy."""
    root = tmp_path_factory.mktemp("paging")
    folder = root / FOLDER
    folder.mkdir()
    for name in NOTES:
        shutil.copy(EXAMPLES / name, folder / name)
    data_dir = root / "data"
    with open_runtime([], isolated_settings(data_dir), require_data=False, embedder=embedder) as runtime:
        ingest_into(str(folder), runtime.config, runtime.store, embedder)
    return data_dir


class Served(Serve):
    """A running `agrag serve` and the data dir it holds."""

    def __init__(self, data_dir: Path, *args: str, env: dict[str, str]) -> None:
        super().__init__(data_dir, *args, env=env)
        self.data_dir = data_dir


class Servers:
    """`agrag serve --allow-write` on copies of the corpus, with an unscoped and a scoped token; one that died (a
    crash under test) is replaced by a new one on a fresh copy, so one crash fails one test, not every test after."""

    def __init__(self, corpus: Path, root: Path) -> None:
        self.corpus = corpus
        self.root = root
        self.current: Served | None = None

    def live(self) -> Served:
        """The running server, started first if there is none or it died."""
        if self.current is not None and self.current.process.poll() is None:
            return self.current
        root = self.root / f"server{len(list(self.root.iterdir()))}"
        data_dir = copy_data_dir(self.corpus, root / "data")
        files_root = root / "files"
        shutil.copytree(self.corpus.parent / FOLDER, files_root / FOLDER)
        tokens = [{"name": "admin", "token": ADMIN}, {"name": "team", "token": SCOPED, "documents": list(SCOPE)}]
        env = serve_env(
            data_dir,
            AGRAG_API_TOKENS=json.dumps(tokens),
            AGRAG_FILES_ROOT=str(files_root),
            AGRAG_MCP_MAX_RESULT_CHARS=str(MAX_RESULT_CHARS),
            PREFECT_API_URL=str(PREFECT_API_URL.value()),  # the session's server (corpus needs it): none to start
        )
        # serving no deployment: the session's Prefect server is other tests' too
        self.current = Served(data_dir, "--allow-write", "--deployment", "", env=env)
        self.current.started()
        return self.current

    def stop(self) -> None:
        if self.current is not None and self.current.process.poll() is None:
            self.current.stop()


@pytest.fixture(scope="module")
def servers(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    pool = Servers(corpus, tmp_path_factory.mktemp("served"))
    try:
        yield pool
    finally:
        pool.stop()


@pytest.fixture
def served(servers: Servers) -> Served:
    """A running `agrag serve --allow-write` (the module's, unless a test before crashed it)."""
    return servers.live()


def alive(served: Served) -> None:
    """Fail, with the end of its log, if the server has died."""
    code = served.process.poll()
    assert code is None, f"agrag serve died with exit code {code}: {served.stderr[-2000:]}"


class Watched(httpx.Client):
    """An HTTP client of the served API that, when a request gets no answer, says whether the server died."""

    def __init__(self, served: Served, token: str) -> None:
        super().__init__(base_url=served.url, headers={"Authorization": f"Bearer {token}"}, timeout=120)
        self.served = served

    def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        try:
            return super().send(request, **kwargs)
        except httpx.TransportError:
            with suppress(subprocess.TimeoutExpired):
                self.served.process.wait(10)
            alive(self.served)
            raise


def http(served: Served, token: str) -> Watched:
    return Watched(served, token)


@asynccontextmanager
async def client(url: str, token: str) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session over streamable HTTP with a bearer token; calls time out."""
    async with (
        httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http_client,
        streamable_http_client(url, http_client=http_client) as (read, write, _),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session,
    ):
        await session.initialize()
        yield session


async def call_on(served: Served, session: ClientSession, name: str, arguments: dict[str, Any] | None = None) -> Any:
    """``call``, saying so when the server died under the call."""
    try:
        return await call(session, name, arguments)
    except Exception:
        await anyio.to_thread.run_sync(_wait_for_exit, served)
        alive(served)
        raise


async def refused_on(served: Served, session: ClientSession, name: str, arguments: dict[str, Any]) -> str:
    """``refused``, saying so when the server died under the call."""
    try:
        return await refused(session, name, arguments)
    except Exception:
        await anyio.to_thread.run_sync(_wait_for_exit, served)
        alive(served)
        raise


def _wait_for_exit(served: Served) -> None:
    with suppress(subprocess.TimeoutExpired):
        served.process.wait(10)


# defect 2: a page past the end, an offset out of range


def test_r3_defect_2_a_page_past_the_end_is_empty_and_the_server_keeps_serving(served: Served) -> None:
    with http(served, ADMIN) as admin, http(served, SCOPED) as scoped:
        every = [d["id"] for d in admin.get("/v1/documents").json()]
        assert len(every) == len(NOTES)
        assert [d["id"] for d in scoped.get("/v1/documents").json()] == sorted(SCOPE, key=every.index)
        assert [d["id"] for d in admin.get("/v1/documents", params={"offset": 1, "limit": 2}).json()] == every[1:3]
        for client_, count in ((scoped, len(SCOPE)), (admin, len(every))):
            for offset in (count, count + 1, *CRASHING_OFFSETS, MAX_OFFSET):
                response = client_.get("/v1/documents", params={"offset": offset, "limit": 1000})
                alive(served)
                assert response.status_code == 200, response.text
                assert response.json() == [], offset
        assert admin.get("/readyz").status_code == 200


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"offset": 10**9}, "offset"),
        ({"offset": 10**20}, "offset"),
        ({"offset": MAX_OFFSET + 1}, "offset"),
        ({"offset": -1}, "offset"),
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"limit": 10**20}, "limit"),
    ],
)
def test_r3_defect_2_an_offset_or_limit_out_of_range_is_a_typed_422(
    served: Served, params: dict[str, int], field: str
) -> None:
    with http(served, ADMIN) as admin, http(served, SCOPED) as scoped:
        for client_ in (admin, scoped):
            response = client_.get("/v1/documents", params=params)
            alive(served)
            assert response.status_code == 422, response.text
            body = response.json()
            assert body["error"] == "ValidationError" and f"query.{field}:" in body["message"]
            assert "Kùzu" not in body["message"] and "Traceback" not in response.text
        preview = admin.post("/v1/files/preview", json={"paths": [], **params})
        alive(served)
        assert preview.status_code == 422 and f"{field}:" in preview.json()["message"], preview.text


def test_r3_defect_2_an_integer_filter_beyond_64_bits_is_a_typed_422(served: Served) -> None:
    """An integer reaching a store is bounded as offsets are: a property filter past 64 bits failed inside Qdrant's
    filter conversion (400 quoting its internals); within 64 bits it is an ordinary filter."""
    with http(served, ADMIN) as admin:
        for value in (2**63, -(2**63) - 1, 10**20):
            body = {"query": "Orion", "recipe": "multi_hop", "filters": {"properties": {"order": value}}}
            response = admin.post("/v1/search", json=body)
            alive(served)
            assert response.status_code == 422, response.text
            assert "properties.order" in response.json()["message"] and "Overflow" not in response.text
        body = {"query": "Orion", "recipe": "multi_hop", "filters": {"properties": {"order": 2**63 - 1}}}
        assert admin.post("/v1/search", json=body).json()["hits"] == []


async def test_r3_defect_2_mcp_list_documents_past_the_end_over_http(served: Served) -> None:
    for token, count in ((SCOPED, len(SCOPE)), (ADMIN, len(NOTES))):
        async with client(f"{served.url}/mcp", token) as session:
            assert len((await call_on(served, session, "list_documents"))["result"]) == count
            for offset in (count, *CRASHING_OFFSETS, MAX_OFFSET):
                assert (await call_on(served, session, "list_documents", {"offset": offset}))["result"] == [], offset
                alive(served)
            for arguments in ({"offset": 10**20}, {"offset": MAX_OFFSET + 1}, {"offset": -1}, {"limit": 10**20}):
                error = await refused_on(served, session, "list_documents", arguments)
                alive(served)
                assert error.startswith("Invalid arguments:") and next(iter(arguments)) in error, error


async def test_r3_defect_2_stdio_mcp_and_the_cli_page_past_the_end(corpus: Path, tmp_path: Path) -> None:
    data_dir = copy_data_dir(corpus, tmp_path / "data")
    env = {**cli_env(data_dir), "PREFECT_HOME": str(tmp_path / "prefect")}
    async with (
        stdio_client(stdio_parameters(data_dir, "--document", SCOPE[0], "--document", SCOPE[1])) as (read, write),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session,
    ):
        await session.initialize()
        assert len((await call(session, "list_documents"))["result"]) == len(SCOPE)
        for offset in CRASHING_OFFSETS:
            assert (await call(session, "list_documents", {"offset": offset}))["result"] == [], offset
        error = await refused(session, "list_documents", {"offset": 10**20})
        assert error.startswith("Invalid arguments: offset:"), error
    for offset in (10_000, 1_000_000):
        done = run_agrag("documents", "--offset", str(offset), env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "no documents" in done.stdout
    done = run_agrag("documents", "--offset", str(10**20), env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--offset" in done.stderr and f"{MAX_OFFSET}" in done.stderr and "Traceback" not in done.stderr


def test_r3_defect_2_the_graph_store_pages_safely_in_a_child_process(corpus: Path, tmp_path: Path) -> None:
    """The store itself, driven by hypothesis in a child process: every page equals the slice of the whole
    listing, an out-of-range page is a typed error, and a read-only graph query with SKIP is refused."""
    graph = tmp_path / "graph.kuzu"
    shutil.copy(corpus / "graph.kuzu", graph)
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.kuzu_paging_probe", str(graph), "--examples", "300"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (
        f"the probe ended with {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    checked = int(done.stdout.rsplit("pages checked: ", 1)[1])
    assert checked >= 200, done.stdout[-2000:]


# defect 2: the property over every paged route and tool, against the served store


def ints(low: int, high: int) -> st.SearchStrategy[int]:
    """Integers around and far outside ``low..high``: the edges, 32/53/64-bit limits and huge values."""
    edges = [low - 1, low, low + 1, high - 1, high, high + 1, 2**31 - 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 10**20]
    return st.one_of(
        st.integers(low, min(high, low + 30)),
        st.integers(low, high),
        st.integers(max(low, 5_000), min(high, 30_000)) if high > 5_000 else st.integers(low, high),
        st.sampled_from([e for e in edges if e >= -(2**63)] + [-1, -(2**63), -(2**70)]),
        st.integers(-(2**80), 2**80),
    )


@dataclass(frozen=True)
class Answer:
    """A route's or a tool's answer: accepted with its body, or refused with its error text."""

    ok: bool
    body: Any
    error: str = ""


@dataclass(frozen=True)
class Probe:
    """One paged route or tool: the integer fields it takes with their accepted ranges, and how to call it."""

    name: str
    fields: dict[str, tuple[int, int]]
    send: Callable[[dict[str, int]], Answer]
    check: Callable[[dict[str, int], Any], None]
    refusal: str = "ValidationError"


class Callers:
    """What the property test calls through: HTTP clients, evidence sessions and MCP sessions of both tokens."""

    def __init__(self, served: Served, portal: BlockingPortal, stack: ExitStack) -> None:
        self.served = served
        self.portal = portal
        self.http = {
            name: stack.enter_context(http(served, token)) for name, token in (("admin", ADMIN), ("scoped", SCOPED))
        }
        self.sessions = {
            name: self.http[name].post("/v1/sessions", json={}).json()["id"] for name in ("admin", "scoped")
        }
        self.mcp = {
            name: stack.enter_context(portal.wrap_async_context_manager(client(f"{served.url}/mcp", token)))
            for name, token in (("admin", ADMIN), ("scoped", SCOPED))
        }
        self.documents = {
            name: [d["id"] for d in self.http[name].get("/v1/documents", params={"limit": 1000}).json()]
            for name in ("admin", "scoped")
        }
        self.files = self.http["admin"].post("/v1/files/preview", json={"limit": 1}).json()["total"]

    def get(self, who: str, path: str, params: dict[str, int]) -> Answer:
        return _answer(self.http[who].get(path, params=params))

    def post(self, who: str, path: str, body: dict[str, Any]) -> Answer:
        return _answer(self.http[who].post(path, json=body))

    def tool(self, who: str, name: str, arguments: dict[str, Any]) -> Answer:
        try:
            result = self.portal.call(self.mcp[who].call_tool, name, arguments)
        except Exception:
            _wait_for_exit(self.served)
            alive(self.served)
            raise
        if result.isError:
            return Answer(False, None, text_of(result))
        return Answer(True, result.structuredContent)


def _answer(response: httpx.Response) -> Answer:
    body = response.json()
    if response.status_code == 200:
        return Answer(True, body)
    assert response.status_code < 500, response.text
    return Answer(False, body, f"{response.status_code} {body['error']}: {body['message']}")


def _page(documents: list[str]) -> Callable[[dict[str, int], Any], None]:
    def check(values: dict[str, int], body: Any) -> None:
        rows = body["result"] if isinstance(body, dict) else body
        offset = values.get("offset", 0)
        assert [d["id"] for d in rows] == documents[offset : offset + values.get("limit", 100)]

    return check


def _at_most(key: str | None) -> Callable[[dict[str, int], Any], None]:
    def check(values: dict[str, int], body: Any) -> None:
        items = body if key is None else body[key]
        assert isinstance(items, list) and len(items) <= values["limit"]

    return check


def _files(total: int) -> Callable[[dict[str, int], Any], None]:
    def check(values: dict[str, int], body: Any) -> None:
        offset, limit = values.get("offset", 0), values.get("limit", 10)
        assert body["total"] == total and len(body["files"]) == max(0, min(limit, total - offset))

    return check


def probes(callers: Callers) -> dict[str, Probe]:
    """Every paged route (HTTP) and tool (MCP), each with the integer fields it pages or bounds by."""
    doc_fields = {"offset": (0, MAX_OFFSET), "limit": (1, 1000)}
    preview_fields = {"offset": (0, MAX_OFFSET), "limit": (1, 100), "chars": (100, 20_000)}
    found: list[Probe] = []
    for who in ("admin", "scoped"):
        session = callers.sessions[who]
        found += [
            Probe(
                f"GET /v1/documents ({who})",
                doc_fields,
                lambda v, w=who: callers.get(w, "/v1/documents", v),
                _page(callers.documents[who]),
            ),
            Probe(
                f"MCP list_documents ({who})",
                doc_fields,
                lambda v, w=who: callers.tool(w, "list_documents", v),
                _page(callers.documents[who]),
            ),
            Probe(
                f"POST discover ({who})",
                {"limit": (1, 100)},
                lambda v, w=who, s=session: callers.post(w, f"/v1/sessions/{s}/discover", {"query": "Orion", **v}),
                _at_most("hits"),
            ),
            Probe(
                f"POST find_entities ({who})",
                {"limit": (1, 100)},
                lambda v, w=who, s=session: callers.post(w, f"/v1/sessions/{s}/find_entities", {"query": "Orion", **v}),
                _at_most(None),
            ),
            Probe(
                f"POST explore ({who})",
                {"depth": (1, 3), "limit": (1, 100)},
                lambda v, w=who, s=session: callers.post(
                    w, f"/v1/sessions/{s}/explore", {"entity": "Orion Planner", **v}
                ),
                _at_most("edges"),
            ),
            Probe(
                f"MCP search_evidence ({who})",
                {"limit": (1, 100)},
                lambda v, w=who: callers.tool(w, "search_evidence", {"query": "Orion Planner", **v}),
                _at_most("hits"),
            ),
            Probe(
                f"MCP find_entities ({who})",
                {"limit": (1, 100)},
                lambda v, w=who: callers.tool(w, "find_entities", {"query": "Orion", **v}),
                _at_most("result"),
            ),
            Probe(
                f"MCP explore ({who})",
                {"depth": (1, 3), "limit": (1, 100)},
                lambda v, w=who: callers.tool(w, "explore", {"entity": "Orion Planner", **v}),
                lambda v, body: None,  # a cut reply may drop edges; in range it must only not fail
            ),
            Probe(
                f"POST /v1/search recipe.limit ({who})",
                {"limit": (1, 1000)},
                lambda v, w=who: callers.post(
                    w, "/v1/search", {"query": "Orion", "recipe": "hybrid", "overrides": [f"recipe.limit={v['limit']}"]}
                ),
                _at_most("hits"),
                refusal="ConfigError",
            ),
        ]
    found += [
        Probe(
            "POST /v1/files/preview",
            preview_fields,
            lambda v: callers.post("admin", "/v1/files/preview", {"paths": [], **v}),
            _files(callers.files),
        ),
        Probe(
            "MCP preview_files",
            preview_fields,
            lambda v: callers.tool("admin", "preview_files", v),
            _files(callers.files),
        ),
        Probe(
            "GET /v1/ingestions",
            {"limit": (1, 500)},
            lambda v: callers.get("admin", "/v1/ingestions", v),
            _at_most(None),
        ),
    ]
    return {probe.name: probe for probe in found}


@pytest.fixture
def callers(served: Served) -> Iterator[Callers]:
    with start_blocking_portal() as portal, ExitStack() as stack:
        yield Callers(served, portal, stack)


PAGED = (
    *(
        f"{route} ({who})"
        for who in ("admin", "scoped")
        for route in (
            "GET /v1/documents",
            "MCP list_documents",
            "POST discover",
            "POST find_entities",
            "POST explore",
            "MCP search_evidence",
            "MCP find_entities",
            "MCP explore",
            "POST /v1/search recipe.limit",
        )
    ),
    "POST /v1/files/preview",
    "MCP preview_files",
    "GET /v1/ingestions",
)


def test_every_paged_route_and_tool_is_probed(callers: Callers) -> None:
    assert sorted(probes(callers)) == sorted(PAGED)


@pytest.mark.parametrize("name", PAGED)
@settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_r3_defect_2_offsets_and_limits_on_every_paged_route_and_tool(
    name: str, data: st.DataObject, callers: Callers, served: Served
) -> None:
    alive(served)  # a server that died under an earlier example fails the others at once (no 60 s timeouts)
    probe = probes(callers)[name]
    values = {field: data.draw(ints(low, high), label=field) for field, (low, high) in probe.fields.items()}
    answer = probe.send(values)
    alive(served)
    wrong = [field for field, value in values.items() if not probe.fields[field][0] <= value <= probe.fields[field][1]]
    if wrong:
        assert not answer.ok, f"{name} accepted {values}"
        assert any(field in answer.error for field in wrong), answer.error
        assert "Traceback" not in answer.error and "Kùzu" not in answer.error
        if name.startswith("MCP"):
            assert answer.error.startswith("Invalid arguments:"), answer.error
        else:
            assert probe.refusal in answer.error, answer.error
        return
    assert answer.ok, f"{name} refused {values}: {answer.error}"
    probe.check(values, answer.body)


# defect 7: `agrag mcp` forwarding to a server that takes writes


async def test_r3_defect_7_agrag_mcp_forwarding_offers_and_runs_read_tools_only(served: Served) -> None:
    data_dir = served.data_dir
    with http(served, ADMIN) as admin:
        before = admin.get("/v1/ontology").json()
        runs_before = admin.get("/v1/ingestions").json()
    async with (
        stdio_client(stdio_parameters(data_dir)) as (read, write),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session,
    ):
        init = await session.initialize()
        offered = {tool.name for tool in (await session.list_tools()).tools}
        assert offered == READ_TOOLS
        assert init.instructions is not None and "set_ontology" not in init.instructions
        for name, arguments in (
            ("set_ontology", {"labels": {"Gadget": "A small device."}}),
            ("delete_document", {"document_id": SCOPE[0]}),
            ("ingest", {"text": "# Note\n\nA gadget.", "document": "gadget.md"}),
            ("preview_files", {}),
        ):
            error = await refused(session, name, arguments)
            assert error.startswith("Read-only server:") and "agrag mcp" in error, error
        assert (await call(session, "list_documents", {"offset": 10_000}))["result"] == []
        assert len((await call(session, "list_documents"))["result"]) == len(NOTES), "the document was not deleted"
    alive(served)
    with http(served, ADMIN) as admin:
        assert admin.get("/v1/ontology").json() == before, "set_ontology ran"
        assert admin.get("/v1/ingestions").json() == runs_before, "a run was queued"


# defect 9: bounded replies, deleting an unknown id, write tools for a scoped token


async def test_r3_defect_9_every_mcp_reply_fits_its_bound(served: Served) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": "Orion Planner incidents", "recipe": "hybrid", "overrides": ["recipe.limit=1000"]}),
        ("search_evidence", {"query": "Orion Planner incidents team", "limit": 100}),
        ("find_entities", {"query": "Orion", "limit": 100}),
        ("explore", {"entity": "Orion Planner", "depth": 3, "limit": 100}),
        ("list_documents", {"limit": 1000}),
        ("status", {}),
    ]
    cut = 0
    async with client(f"{served.url}/mcp", ADMIN) as session:
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            text = text_of(result)
            assert not result.isError, text
            assert len(text) <= MAX_RESULT_CHARS, f"{name}: {len(text)} characters"
            assert json.loads(text) == result.structuredContent
            cut += "truncation" in result.structuredContent
    assert cut, "no reply reached the bound: the test proves nothing"


async def test_r3_defect_9_delete_document_of_an_unknown_id_is_a_typed_error_and_queues_nothing(
    served: Served,
) -> None:
    unknown = "d0123456789abcdef-nope"
    with http(served, ADMIN) as admin:
        runs_before = admin.get("/v1/ingestions").json()
    async with client(f"{served.url}/mcp", ADMIN) as session:
        error = await refused(session, "delete_document", {"document_id": unknown})
    assert error.startswith("Not found:") and repr(unknown) in error and "list_documents" in error, error
    with http(served, ADMIN) as admin:
        assert admin.get("/v1/ingestions").json() == runs_before, "a run was queued"
        assert len(admin.get("/v1/documents").json()) == len(NOTES)


async def test_r3_defect_9_a_scoped_token_is_neither_offered_nor_served_the_write_tools(served: Served) -> None:
    async with client(f"{served.url}/mcp", ADMIN) as session:
        assert {tool.name for tool in (await session.list_tools()).tools} == READ_TOOLS | WRITE_TOOLS
    async with client(f"{served.url}/mcp", SCOPED) as session:
        assert {tool.name for tool in (await session.list_tools()).tools} == READ_TOOLS
        for name, arguments in (
            ("set_ontology", {"labels": {"Gadget": "A small device."}}),
            ("delete_document", {"document_id": SCOPE[0]}),
            ("preview_files", {}),
            ("finalize", {}),
        ):
            error = await refused(session, name, arguments)
            assert error.startswith("Not allowed:") and "limited to documents" in error, error
    data_dir = served.data_dir
    async with (
        stdio_client(stdio_parameters(data_dir, AGRAG_API_TOKEN=SCOPED)) as (read, write),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session,
    ):
        await session.initialize()
        assert {tool.name for tool in (await session.list_tools()).tools} == READ_TOOLS
        assert sorted(d["id"] for d in (await call(session, "list_documents"))["result"]) == list(SCOPE)
    alive(served)


def cli_env(data_dir: Path) -> dict[str, str]:
    """A user's shell: no AGRAG_ settings but the data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_", "PREFECT_API_"))}
    return {**env, "AGRAG_DATA_DIR": str(data_dir)}


def run_agrag(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([AGRAG, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=180, check=False)
