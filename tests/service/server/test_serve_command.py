"""`agrag serve` as a user runs it: a subprocess on a free port, its server file, its signals, kill -9 and a restart."""

import os
import queue
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prefect.settings import PREFECT_API_URL

from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.service.server.server_file import find_server, server_file
from tests.service.conftest import copy_corpus
from tests.support.drained_process import DrainedProcess
from tests.support.served_api import wait_ready

AGRAG = str(Path(sys.executable).with_name("agrag"))
QUESTION = "Who wrote the Orion Planner?"


def serve_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_"))}
    return {**env, "AGRAG_DATA_DIR": str(data_dir), **extra}


class Serve:
    """A running `agrag serve` and the URL it printed; its output is read all along (``DrainedProcess``)."""

    def __init__(self, data_dir: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [AGRAG, "serve", "--port", "0", *args],
            cwd=data_dir.parent,
            env=env or serve_env(data_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._output = DrainedProcess(self.process)
        self.url = ""

    @property
    def stderr(self) -> str:
        """What it wrote to stderr so far (all of it once stopped)."""
        return self._output.stderr

    def started(self, timeout: float = 90) -> str:
        """The URL of the one line it prints once serving."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._output.lines.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None:
                    pytest.fail(f"agrag serve exited with {self.process.returncode}: {self.finish()}")
                continue
            assert " at http://" in line, line
            self.url = line.split(" at ", 1)[1].split(" ", 1)[0]
            wait_ready(self.url)
            return self.url
        pytest.fail(f"agrag serve printed no URL within {timeout} s")

    def finish(self, timeout: float = 60) -> str:
        self._output.wait(timeout)
        return self.stderr

    def stop(self, how: signal.Signals = signal.SIGTERM) -> int:
        self.process.send_signal(how)
        self.finish()
        return self.process.returncode


@pytest.fixture
def data_dir(ingested_corpus: Path, tmp_path: Path) -> Iterator[Path]:
    yield copy_corpus(ingested_corpus, tmp_path)


@pytest.mark.slow
def test_serve_on_a_free_port_and_stop_on_sigterm(data_dir: Path) -> None:
    serve = Serve(data_dir)
    try:
        url = serve.started()
        info = find_server(data_dir)
        assert info is not None and info.url == url and info.pid == serve.process.pid
        assert oct(server_file(data_dir).stat().st_mode & 0o777) == "0o600"
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {info.token}"}, timeout=60) as client:
            status = client.get("/v1/status").json()
            hits = client.post("/v1/search", json={"query": QUESTION}).json()["hits"]
            assert client.get("/docs").status_code == 200
    finally:
        code = serve.stop(signal.SIGTERM)
    assert status["documents"] == 9 and hits
    assert code == 0, serve.stderr
    assert not server_file(data_dir).exists() and find_server(data_dir) is None
    with DataDirLock(data_dir):  # released
        pass
    assert "POST /v1/search 200" in serve.stderr and " owner" in serve.stderr
    assert info.token not in serve.stderr and "Traceback" not in serve.stderr


@pytest.mark.slow
def test_kill_9_loses_nothing_committed_and_the_next_start_opens_the_stores(
    data_dir: Path, tmp_path: Path, prefect_harness: None
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "pump.md").write_text("# Pump Station\n\nThe Kestrel Pump Station was commissioned by Ilse Varga.\n")
    ask = {"query": "Who commissioned the Kestrel Pump Station?", "recipe": "chunk"}
    # the session's Prefect server, so the served flows need not start a private one
    env = serve_env(data_dir, PREFECT_API_URL=str(PREFECT_API_URL.value()))
    # its own deployment name: `agrag serve-ingest` tests check the default one's parameters on the same server
    deployment = ("--deployment", "serve-command-test")
    first = Serve(data_dir, *deployment, env=env)
    url = first.started()
    with httpx.Client(base_url=url, timeout=60) as client:  # an open server: loopback, no tokens configured
        run = client.post("/v1/ingestions", json={"folder": str(notes)}).json()
        while run["state"] in ("queued", "running"):
            time.sleep(0.2)
            run = client.get(f"/v1/ingestions/{run['id']}").json()
        before = (client.get("/v1/status").json(), client.post("/v1/search", json=ask).json())
    first.process.kill()
    first.finish()
    assert run["state"] == "completed", run["message"]
    assert server_file(data_dir).exists() and find_server(data_dir) is None  # stale: its process is gone

    second = Serve(data_dir, *deployment, env=env)
    try:
        url = second.started()
        assert find_server(data_dir) is not None
        with httpx.Client(base_url=url, timeout=60) as client:
            after = (client.get("/v1/status").json(), client.post("/v1/search", json=ask).json())
    finally:
        code = second.stop(signal.SIGINT)
    assert after == before and after[0]["documents"] == 10 and after[0]["last_ingestion"]["id"] == run["id"]
    assert "Ilse Varga" in after[1]["hits"][0]["item"]["text"]
    assert code == 0, second.stderr
    assert not server_file(data_dir).exists()


def refused(data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [AGRAG, "serve", "--port", "0", *args]
    return subprocess.run(command, env=serve_env(data_dir, **env), capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_serve_refuses_to_start_when_it_cannot_serve_safely(data_dir: Path) -> None:
    exposed = refused(data_dir, "--host", "0.0.0.0")
    assert exposed.returncode == 2
    assert "AGRAG_API_TOKENS" in exposed.stderr and "Traceback" not in exposed.stderr
    short = refused(data_dir, "--host", "0.0.0.0", AGRAG_API_TOKENS="tooshort")
    assert short.returncode == 2 and "AGRAG_API_TOKENS" in short.stderr and "tooshort" not in short.stderr
    override = refused(data_dir, "recipe=nope")
    assert override.returncode == 2 and "recipe" in override.stderr
    with DataDirLock(data_dir):
        locked = refused(data_dir)
    assert locked.returncode == 1 and "in use" in locked.stderr
    assert not server_file(data_dir).exists()
