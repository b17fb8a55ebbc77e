"""Acceptance screenshot: the Prefect UI's page of the ingest report of a UI-started run with failed files.

What it does, all in a temporary folder (nothing of the developer's is touched):

1. starts a real ``prefect server start`` on a free loopback port, with ``PREFECT_SERVER_API_HOST``/``PORT`` set so
   its UI reaches its own API (with only ``--port`` the UI calls 127.0.0.1:4200 and shows "Unable to connect");
2. starts ``agrag serve`` against it (``PREFECT_API_URL``), which registers and serves the ``agrag-ingest``
   deployment itself;
3. starts a run of that deployment the way the UI's "Run" button does (``run_deployment``) over the example notes
   plus three files that cannot be read: an empty file, a broken PDF and a file that is not UTF-8;
4. waits for the run ("Completed with failures"), finds its ``agrag-ingest-report`` markdown artifact and opens the
   artifact's page in headless Chromium (``--virtual-time-budget``: the UI is a client-side app, without it the
   capture is an empty grey page);
5. writes ``bench/results/prefect-run-artifact.png`` (``--output`` to change) and prints what it measured: the time
   from ``run_deployment`` to Running, to the final state, and the run's final state and message.

Needs ``chromium`` on the PATH (``apt-get install -y chromium``). Run it with ``make screenshot`` or
``.venv/bin/python bench/prefect_ui_screenshot.py``; it takes about a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "acme_notes"
BIN = Path(sys.executable).parent
OFFLINE = {
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1400,1500",
    "--virtual-time-budget=15000",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(what: str, check: Any, timeout: float, process: subprocess.Popen[Any] | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        if process is not None and process.poll() is not None:
            sys.exit(f"{what}: the process exited with {process.returncode}")
        time.sleep(0.2)
    sys.exit(f"{what}: nothing after {timeout:.0f} s")


def failing_folder(root: Path) -> Path:
    """The example notes, plus an empty file, a broken PDF and a file that is not UTF-8."""
    folder = root / "notes"
    shutil.copytree(EXAMPLES, folder)
    (folder / "empty.md").write_bytes(b"")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a PDF\n")
    (folder / "latin1.txt").write_bytes("Café Zürich: the Orion Planner's first site.\n".encode("latin-1"))
    return folder


def start_prefect(root: Path, port: int) -> subprocess.Popen[bytes]:
    env = (
        os.environ
        | OFFLINE
        | {
            "PREFECT_HOME": str(root / "prefect-server"),
            "PREFECT_SERVER_API_HOST": "127.0.0.1",
            "PREFECT_SERVER_API_PORT": str(port),
        }
    )
    (root / "prefect-server").mkdir()
    log = (root / "prefect-server.log").open("wb")
    command = [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def start_serve(root: Path, api_url: str) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_", "PREFECT_"))}
    env |= OFFLINE | {
        "AGRAG_DATA_DIR": str(root / "data"),
        "PREFECT_API_URL": api_url,
        "PREFECT_HOME": str(root / "prefect-client"),
    }
    serve = subprocess.Popen(
        [str(BIN / "agrag"), "serve", "--port", "0"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=(root / "serve.log").open("w"),
        text=True,
    )
    assert serve.stdout is not None
    if not select.select([serve.stdout], [], [], 120)[0]:
        sys.exit("agrag serve printed nothing within 120 s; see serve.log")
    line = serve.stdout.readline()
    if " at http://" not in line:
        sys.exit(f"agrag serve did not start: {line!r}; see {root / 'serve.log'}")
    return serve, line.split(" at ", 1)[1].split(" ", 1)[0]


def run_and_wait(folder: Path) -> tuple[Any, dict[str, float]]:
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:

        def registered() -> bool:
            try:
                client.read_deployment_by_name("agrag-ingest/agrag-ingest")
            except ObjectNotFound:
                return False
            return True

        wait_until("deployment agrag-ingest/agrag-ingest", registered, 120)
        asked = time.monotonic()
        flow_run: Any = run_deployment("agrag-ingest/agrag-ingest", parameters={"folder": str(folder)}, timeout=0)
        timings: dict[str, float] = {}

        def reached(final: bool) -> bool:
            state = client.read_flow_run(flow_run.id).state
            return state is not None and (state.is_final() or (not final and state.is_running()))

        wait_until("the run to start", lambda: reached(final=False), 300)
        timings["run_deployment to Running (s)"] = time.monotonic() - asked
        wait_until("the run to end", lambda: reached(final=True), 600)
        timings["run_deployment to final state (s)"] = time.monotonic() - asked
        return client.read_flow_run(flow_run.id), timings


def artifact_id(flow_run_id: Any) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterType

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]), type=ArtifactFilterType(any_=["markdown"])
            )
        )
    if not artifacts:
        sys.exit(f"the run {flow_run_id} published no markdown artifact")
    return str(artifacts[0].id)


def screenshot(url: str, output: Path, root: Path) -> float:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("chromium is not installed: apt-get install -y chromium")
    started = time.monotonic()
    subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={root / 'chromium'}", f"--screenshot={output}", url],
        check=True,
        capture_output=True,
        timeout=180,
    )
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "results" / "prefect-run-artifact.png")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, data dir)")
    args = parser.parse_args()
    output = args.output.resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="agrag-screenshot-"))
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    os.environ |= OFFLINE | {"PREFECT_API_URL": api_url, "PREFECT_HOME": str(root / "prefect-script")}
    prefect = start_prefect(root, port)
    serve = None
    try:
        started = time.monotonic()
        import httpx

        wait_until("prefect server start", lambda: _answers(httpx, f"{api_url}/health"), 120, prefect)
        print(f"Prefect server up at {api_url} in {time.monotonic() - started:.1f} s")
        serve, serve_url = start_serve(root, api_url)
        print(f"agrag serve up at {serve_url}")
        flow_run, timings = run_and_wait(failing_folder(root))
        state = flow_run.state
        print(f"run {flow_run.name}: {state.name}: {state.message}")
        for name, seconds in timings.items():
            print(f"  {name}: {seconds:.1f}")
        url = f"http://127.0.0.1:{port}/v2/artifacts/artifact/{artifact_id(flow_run.id)}"
        took = screenshot(url, output, root)
        print(f"{url} -> {output} ({output.stat().st_size} bytes, Chromium {took:.1f} s)")
    finally:
        if serve is not None:
            serve.send_signal(signal.SIGTERM)
            serve.wait(60)
        os.killpg(prefect.pid, signal.SIGTERM)
        prefect.wait(30)
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def _answers(httpx: Any, url: str) -> bool:
    try:
        return bool(httpx.get(url, timeout=2).status_code == 200)
    except httpx.TransportError:
        return False


if __name__ == "__main__":
    main()
