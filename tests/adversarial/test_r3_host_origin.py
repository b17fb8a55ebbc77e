"""DNS rebinding and the MCP disconnect log, from the hostile probe of issue 43 (defect 3, one item of defect 9).

Every route of ``agrag serve`` (the API, /docs, /redoc, /openapi.json, /healthz, /readyz, /mcp and any page added
later) answers a request whose ``Host`` does not name the server with a typed 421, and one whose browser ``Origin``
is another site with a typed 403, before any route runs. The requests go over raw sockets to a real uvicorn server
on loopback, so the headers are exactly the probe's (an empty Host, HTTP/1.0 without one, two of them).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import ConfigError
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.pipelines.settings import load_agrag_settings
from agrag.service.api.access import AccessPolicy
from agrag.service.api.allowed_hosts import AllowedHosts, BindAddress
from agrag.service.api.app import create_app
from agrag.service.api.errors import HostNotAllowedError, OriginNotAllowedError
from agrag.service.client.server_client import ServerClient
from agrag.service.server.ingestion_queue import IngestionQueue
from agrag.service.server.server_file import ServerInfo
from tests.service.conftest import settings_of
from tests.support.drained_process import DrainedProcess
from tests.support.served_api import uvicorn_in_thread, wait_ready

AGRAG = str(Path(sys.executable).with_name("agrag"))
OWNER = "owner-token-0123456789abcdef"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


@dataclass(frozen=True)
class Reply:
    """A raw HTTP answer: its status and its body."""

    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Served:
    """The tokenless loopback API (as `agrag serve` runs by default) with an ingestion queue that never starts."""

    url: str
    port: int
    runtime: Runtime
    queue: IngestionQueue
    folder: Path

    def send(
        self, method: str, path: str, headers: list[tuple[str, str]], body: Any = None, version: str = "1.1"
    ) -> Reply:
        """One request over a raw socket, with exactly these headers (no Host unless one is given)."""
        payload = b"" if body is None else json.dumps(body).encode()
        lines = [f"{method} {path} HTTP/{version}", *(f"{k}: {v}" for k, v in headers), "Connection: close"]
        if body is not None:
            lines += ["Content-Type: application/json", "Accept: application/json, text/event-stream"]
            lines.append(f"Content-Length: {len(payload)}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as sock:
            sock.sendall(request)
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
                if b"\r\n\r\n" in received and _complete(received):
                    break
        head, _, rest = received.partition(b"\r\n\r\n")
        return Reply(int(head.split(b" ", 2)[1]), rest)


def _complete(received: bytes) -> bool:
    """Whether a response with a Content-Length has all its body (a streamed one is read until the socket closes)."""
    head, _, rest = received.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(rest) >= int(value.strip())
    return False


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("rebinding")
    folder = root / "notes"
    folder.mkdir()
    (folder / "pump.md").write_text("# Pump\n\nThe Kestrel pump station was built by Ilse Varga.\n")
    with open_runtime([], settings_of(root / "data"), require_data=False, embedder=embedder) as runtime:
        queue = IngestionQueue(runtime, runtime.runs)  # never started: a run it accepts stays queued, visibly
        app = create_app(runtime, AccessPolicy([], OWNER), queue=queue, warm_up=False)
        with uvicorn_in_thread(app) as url:
            yield Served(url, int(url.rsplit(":", 1)[1]), runtime, queue, folder)


def routes(served: Served) -> list[tuple[str, str, Any]]:
    """One request of each route family: the API (reads and a write), the pages, health, MCP, an unknown page."""
    return [
        ("GET", "/healthz", None),
        ("GET", "/readyz", None),
        ("GET", "/docs", None),
        ("GET", "/redoc", None),
        ("GET", "/openapi.json", None),
        ("GET", "/v1/status", None),
        ("GET", "/v1/documents", None),
        ("POST", "/v1/search", {"query": "Who built the pump station?"}),
        ("POST", "/v1/sessions", {}),
        ("POST", "/v1/ingestions", {"folder": str(served.folder)}),
        ("POST", "/mcp", INITIALIZE),
        ("GET", "/mcp", None),
        ("GET", "/a/page/added/later", None),
    ]


def foreign_hosts(port: int) -> list[str]:
    """The probe's Host forms that name another site, or this machine in a form no client of agrag sends."""
    return [
        f"evil.example:{port}",
        f"127.0.0.1.evil.example:{port}",
        f"0.0.0.0:{port}",
        f"[::ffff:7f00:1]:{port}",
        f"2130706433:{port}",
        "",
        f"localhost.:{port}",
        f"127.1:{port}",
        f"0x7f000001:{port}",
        f"localhost:{port}.evil.example",
        f"127.0.0.1:{port}@evil.example",
        f"127.0.0.1:{port + 1}",
    ]


def foreign_origins(port: int) -> list[str]:
    """Browser origins of pages that are not this server."""
    return [
        "http://evil.example",
        "null",
        "file://",
        f"http://127.0.0.1.evil.example:{port}",
        f"http://localhost:{port}.evil.example",
        f"http://localhost:{port + 1}",
        f"http://[::ffff:7f00:1]:{port}",
    ]


def assert_refused(reply: Reply, status: int, error: str, setting: str, what: str) -> None:
    assert reply.status == status, f"{what}: {reply.status} {reply.body[:200]!r}"
    body = reply.json()
    assert set(body) == {"error", "message"} and body["error"] == error, f"{what}: {body}"
    assert setting in body["message"] and "\n" not in body["message"], f"{what}: {body}"


def test_r3_defect_3_a_foreign_host_gets_a_typed_421_on_every_route(served: Served) -> None:
    local = f"127.0.0.1:{served.port}"
    for method, path, body in routes(served):
        for host in foreign_hosts(served.port):
            reply = served.send(method, path, [("Host", host)], body)
            assert_refused(reply, 421, "HostNotAllowedError", "AGRAG_ALLOWED_HOSTS", f"{method} {path} Host {host!r}")
        no_host = served.send(method, path, [], body, version="1.0")
        assert_refused(no_host, 421, "HostNotAllowedError", "AGRAG_ALLOWED_HOSTS", f"{method} {path} HTTP/1.0")
        # uvicorn's HTTP parser refuses two Host headers itself (400), before the app; the guard would too (below).
        two = served.send(method, path, [("Host", local), ("Host", "evil.example")], body)
        assert two.status == 400, f"{method} {path} two Hosts: {two}"
    assert not served.queue.pending() and not served.queue.runs(), "no refused request queued an ingestion"
    allowed = AllowedHosts.for_bind(BindAddress("127.0.0.1", served.port), served.runtime.settings.agrag)
    two_hosts = allowed.refusal([local.encode(), b"evil.example"], [], ("127.0.0.1", served.port))
    two_origins = allowed.refusal([local.encode()], [f"http://{local}".encode()] * 2, ("127.0.0.1", served.port))
    assert isinstance(two_hosts, HostNotAllowedError) and isinstance(two_origins, OriginNotAllowedError)


def test_r3_defect_3_a_foreign_origin_gets_a_typed_403_on_every_route(served: Served) -> None:
    local = f"127.0.0.1:{served.port}"
    for method, path, body in routes(served):
        for origin in foreign_origins(served.port):
            reply = served.send(method, path, [("Host", local), ("Origin", origin)], body)
            assert_refused(reply, 403, "OriginNotAllowedError", "AGRAG_ALLOWED_ORIGINS", f"{method} {path} {origin}")
    assert not served.queue.pending() and not served.queue.runs(), "no refused request queued an ingestion"


def test_r3_defect_3_a_rebound_ingestion_is_refused_and_nothing_runs(served: Served) -> None:
    before = len(served.queue.runs())
    body = {"folder": str(served.folder)}
    rebound = served.send("POST", "/v1/ingestions", [("Host", "evil.example"), ("Origin", "http://evil.example")], body)
    assert_refused(rebound, 421, "HostNotAllowedError", "AGRAG_ALLOWED_HOSTS", "the probe's ingestion")
    assert len(served.queue.runs()) == before, "nothing was queued"
    # The same request from curl or the CLI (no Origin), and from the OpenAPI page of this server, is accepted.
    direct = served.send("POST", "/v1/ingestions", [("Host", f"localhost:{served.port}")], body)
    page = served.send(
        "POST",
        "/v1/ingestions",
        [("Host", f"127.0.0.1:{served.port}"), ("Origin", f"http://127.0.0.1:{served.port}")],
        body,
    )
    assert direct.status == 202 and page.status == 202, (direct, page)
    assert len(served.queue.runs()) == before + 2


def test_r3_defect_3_first_party_clients_still_work(served: Served) -> None:
    port = served.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LocalHost:{port}", f"[::1]:{port}"):
        assert served.send("GET", "/v1/status", [("Host", host)]).status == 200, host
    for origin in (f"http://localhost:{port}", f"https://127.0.0.1:{port}", f"http://[::1]:{port}"):
        reply = served.send("GET", "/v1/status", [("Host", f"127.0.0.1:{port}"), ("Origin", origin)])
        assert reply.status == 200, origin
    assert served.send("GET", "/docs", [("Host", f"127.0.0.1:{port}")]).status == 200
    # agrag's own CLI client, as the server file names the server.
    with ServerClient(ServerInfo(served.url, os.getpid(), "now", OWNER), OWNER, served.runtime.data_dir) as client:
        assert client.status().documents == 0
    # httpx and the MCP SDK's client, which send the Host of the URL and no Origin.
    assert httpx.get(f"{served.url}/readyz", timeout=30).status_code == 200

    async def tools() -> int:
        async with (
            httpx.AsyncClient(timeout=60) as http,
            streamable_http_client(f"{served.url}/mcp", http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return len((await session.list_tools()).tools)

    assert asyncio.run(tools()) > 5


def test_r3_defect_9_a_normal_mcp_disconnect_logs_no_error(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    async def connect_and_leave() -> None:
        async with (
            httpx.AsyncClient(timeout=60) as http,
            streamable_http_client(f"{served.url}/mcp", http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            await asyncio.sleep(0.3)  # the client's event stream (GET /mcp) is open now

    with caplog.at_level(logging.DEBUG):
        for _ in range(3):
            asyncio.run(connect_and_leave())
        time.sleep(0.5)  # the server ends the session's streams after the client's DELETE
        loud = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
        assert not loud, [f"{r.name}: {r.getMessage()}" for r in loud]
        # A real failure of the SDK's writer is still an error with its traceback.
        try:
            raise RuntimeError("a real failure")
        except RuntimeError:
            logging.getLogger("mcp.server.streamable_http").exception("Error in standalone SSE writer")
    errors = [r for r in caplog.records if r.levelno == logging.ERROR and r.exc_info]
    assert [r.getMessage() for r in errors] == ["Error in standalone SSE writer"]


def test_r3_defect_3_allowed_hosts_and_origins_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGRAG_ALLOWED_HOSTS", " Agrag.Example.com, 10.0.0.5:8765,[FD00::2]:9000,")
    monkeypatch.setenv("AGRAG_ALLOWED_ORIGINS", "https://Tools.example.com")
    settings = load_agrag_settings()
    assert settings.allowed_hosts == ("agrag.example.com", "10.0.0.5:8765", "[fd00::2]:9000")
    allowed = AllowedHosts.for_bind(BindAddress("127.0.0.1", 8765), settings)
    local = ("127.0.0.1", 8765)
    for host in ("agrag.example.com", "agrag.example.com:443", "10.0.0.5:8765", "[fd00::2]:9000", "localhost:8765"):
        assert allowed.refusal([host.encode()], [], local) is None, host
    for host in ("10.0.0.5:8766", "[fd00::2]", "example.com", "localhost:8766", "localhost"):
        assert isinstance(allowed.refusal([host.encode()], [], local), HostNotAllowedError), host
    for origin in ("https://tools.example.com", "https://tools.example.com:443", "https://agrag.example.com:8443"):
        assert allowed.refusal([b"localhost:8765"], [origin.encode()], local) is None, origin
    for origin in ("http://tools.example.com", "https://tools.example.com:8443", "https://tools.example.com/x"):
        assert isinstance(allowed.refusal([b"localhost:8765"], [origin.encode()], local), OriginNotAllowedError)
    for name, value in (("AGRAG_ALLOWED_HOSTS", "http://agrag.example.com"), ("AGRAG_ALLOWED_ORIGINS", "tools.com")):
        monkeypatch.setenv(name, value)
        with pytest.raises(ConfigError, match=name):
            load_agrag_settings()
        monkeypatch.delenv(name)


def serve_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_"))}
    return {**env, "AGRAG_DATA_DIR": str(data_dir), **extra}


@pytest.mark.slow
@pytest.mark.needs_model
@pytest.mark.needs_prefect  # runs `agrag serve` and `agrag status` in subprocesses
def test_r3_defect_3_serve_on_all_interfaces_names_the_hosts_it_accepts(tmp_path: Path) -> None:
    token = "remote-token-0123456789abcdef"
    env = serve_env(tmp_path / "data", AGRAG_API_TOKENS=token, AGRAG_ALLOWED_HOSTS="agrag.example.test")
    process = subprocess.Popen(
        [AGRAG, "serve", "--host", "0.0.0.0", "--port", "0", "--deployment", ""],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    output = DrainedProcess(process)
    try:
        url = ""
        deadline = time.monotonic() + 120
        while not url and time.monotonic() < deadline and process.poll() is None:
            url = next(
                (
                    line.split(" at ", 1)[1].split(" ", 1)[0]
                    for line in output.stdout.splitlines()
                    if " at http://" in line
                ),
                "",
            )
            time.sleep(0.1)
        assert url, f"agrag serve printed no URL: {output.stdout} {output.stderr}"
        wait_ready(url)
        port = int(url.rsplit(":", 1)[1])
        announced = output.stdout
        assert "agrag.example.test" in announced and "AGRAG_ALLOWED_HOSTS" in announced, announced
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=auth, timeout=30) as http:
            named = http.get("/v1/status", headers={"Host": f"agrag.example.test:{port}"})
            machine = http.get("/v1/status", headers={"Host": f"{socket.gethostname()}:{port}"})
            rebound = http.get("/v1/status", headers={"Host": f"evil.example:{port}"})
            local = http.get("/v1/status")
        assert named.status_code == 200 and machine.status_code == 200 and local.status_code == 200
        assert rebound.status_code == 421 and rebound.json()["error"] == "HostNotAllowedError"
        status = subprocess.run(
            [AGRAG, "status"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert status.returncode == 0 and url in status.stdout, status.stdout + status.stderr
    finally:
        process.terminate()
        output.wait(60)
