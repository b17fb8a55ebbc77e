"""`agrag serve` serving the agrag-ingest deployment itself, as a Prefect UI user meets it.

One served process (a subprocess against the session's Prefect server) for the module; runs are started with
`run_deployment`, as the UI's Run button does, and everything is read back from the Prefect API and the HTTP API.
"""

import logging
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    LogFilter,
    LogFilterFlowRunId,
    TaskRunFilter,
    TaskRunFilterFlowRunId,
)
from prefect.client.schemas.objects import FlowRun, State
from prefect.deployments import run_deployment
from prefect.exceptions import ObjectNotFound
from prefect.settings import PREFECT_API_URL
from prefect.states import Cancelling
from typer.testing import CliRunner

from agrag.service.cli import app
from agrag.service.server.served_deployment import POLL_SECONDS
from tests.service.server.test_serve_command import Serve, serve_env
from tests.support import synthetic_corpus
from tests.support.scripted_llm import ScriptedLLM, scripted_llm

pytestmark = pytest.mark.slow

NAME = "served-test"  # not the default name: tests of `agrag serve-ingest` register that one on the same server
DEPLOYMENT = f"agrag-ingest/{NAME}"
STAGES = ("load", "select-changed", "chunk", "extract", "prune", "resolve", "embed", "write", "communities", "reports")
NOTE = "# {title}\n\nMaria Chen wrote the {title} in Lyon. Jonas Berg runs it in Oslo since {year}.\n"


def notes(folder: Path, count: int = 3, *, failing: bool = False) -> Path:
    folder.mkdir(parents=True)
    for i in range(count):
        (folder / f"note{i}.md").write_text(NOTE.format(title=f"{folder.name} system {i}", year=2010 + i))
    if failing:
        (folder / "empty.md").write_bytes(b"")
        (folder / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a PDF\n")
        (folder / "latin1.txt").write_bytes("Café Zürich hosts the planner.\n".encode("latin-1"))
    return folder


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("served")


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    """The LLM of the served process: a test holds its answers to keep a run running as long as it needs."""
    with scripted_llm(synthetic_corpus.answer) as server:
        yield server


@pytest.fixture(scope="module")
def served(prefect_harness: None, root: Path, llm: ScriptedLLM) -> Iterator[Serve]:
    """`agrag serve` on an empty data dir, with the session's Prefect server as its PREFECT_API_URL."""
    env = serve_env(
        root / "data",
        PREFECT_API_URL=str(PREFECT_API_URL.value()),
        PREFECT_HOME=str(root / "prefect-client"),
        AGRAG_LLM_BASE_URL=llm.base_url,
        AGRAG_LLM_MAX_RETRIES="0",
    )
    env.pop("PREFECT_LOGGING_LEVEL", None)  # as a user's shell
    serve = Serve(root / "data", "--deployment", NAME, env=env)
    serve.started()
    try:
        yield serve
    finally:
        serve.stop(signal.SIGTERM)
        (root / "serve.log").write_text(serve.stderr)  # for a failing test: what the server logged


@pytest.fixture(scope="module")
def client(served: Serve) -> Iterator[SyncPrefectClient]:
    with get_client(sync_client=True) as prefect:
        deadline = time.monotonic() + 60
        while True:
            try:
                prefect.read_deployment_by_name(DEPLOYMENT)
                break
            except ObjectNotFound:
                assert time.monotonic() < deadline, "agrag serve did not register the deployment"
                time.sleep(0.2)
        yield prefect


def start(parameters: dict[str, Any]) -> FlowRun:
    flow_run: FlowRun = run_deployment(name=DEPLOYMENT, parameters=parameters, timeout=0)  # type: ignore[assignment]
    return flow_run


def wait_state(client: SyncPrefectClient, flow_run: FlowRun, done: Any, timeout: float = 120) -> State:
    deadline = time.monotonic() + timeout
    while True:
        state = client.read_flow_run(flow_run.id).state
        if state is not None and done(state):
            return state
        assert time.monotonic() < deadline, f"{flow_run.name} is {state}"
        time.sleep(0.1)


def final_state(client: SyncPrefectClient, flow_run: FlowRun) -> State:
    return wait_state(client, flow_run, lambda s: s.is_final())


def messages(client: SyncPrefectClient, flow_run: FlowRun, expected: str, timeout: float = 15) -> list[str]:
    """The run's log lines, once one containing ``expected`` arrived (logs reach the API in batches)."""
    deadline = time.monotonic() + timeout
    while True:
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run.id])))
        lines = [log.message for log in logs if log.level >= logging.INFO]
        if any(expected in line for line in lines) or time.monotonic() > deadline:
            return lines


def test_ui_runs_queue_in_order_cancel_and_report_failed_files(
    served: Serve, client: SyncPrefectClient, root: Path, llm: ScriptedLLM
) -> None:
    deployment = client.read_deployment_by_name(DEPLOYMENT)
    assert deployment.parameters == {"overrides": [], "data_dir": str((root / "data").resolve())}
    assert deployment.description and "Completed with failures" in deployment.description
    llm.hold_after_answers(0)  # the first run waits in LLM extraction until released
    (root / "first").mkdir()
    synthetic_corpus.write_corpus(root / "first", 4)
    running = start({"folder": str(root / "first"), "overrides": ["ingest/extractor=llm", "ingest/ontology=open"]})
    deadline = time.monotonic() + 120
    while not llm.held:
        assert time.monotonic() < deadline and not client.read_flow_run(running.id).state.is_final()  # type: ignore[union-attr]
        time.sleep(0.1)
    failing = start({"folder": str(notes(root / "failing", failing=True))})
    dropped = start({"folder": str(notes(root / "dropped"))})

    queued = wait_state(client, failing, lambda s: s.is_pending() and s.name == "Queued")
    assert f"Queued behind run: {running.id} (ingest of {root / 'first'}, running)" in str(queued.message)
    assert wait_state(client, dropped, lambda s: s.name == "Queued").message.startswith("Queued behind 2 runs")
    client.set_flow_run_state(dropped.id, Cancelling(message="cancel from the UI"))
    client.set_flow_run_state(running.id, Cancelling(message="cancel from the UI"))
    cancelled_before = final_state(client, dropped)
    assert cancelled_before.is_cancelled() and "Cancelled before it started" in str(cancelled_before.message)
    wait_state(client, running, lambda s: s.type.value == "CANCELLING")
    time.sleep(2 * POLL_SECONDS)  # the server sees the cancel at its next poll
    llm.hold_after = None
    llm.release.set()  # the held requests fail; the run stops at its next safe point

    stopped = final_state(client, running)
    assert stopped.is_cancelled() and stopped.name == "Cancelled", stopped
    assert "stopped at a safe point (cancelled from the Prefect UI)" in str(stopped.message)
    assert "start the same ingestion again and it resumes" in str(stopped.message)

    assert_reported_with_failures(client, failing)
    with httpx.Client(base_url=served.url, timeout=30) as http:
        recorded = {r["id"]: r for r in http.get("/v1/ingestions").json()}
    assert recorded[str(failing.id)]["state"] == "completed_with_failures"
    assert recorded[str(failing.id)]["source"] == "prefect"
    assert recorded[str(dropped.id)]["state"] == "cancelled"
    assert [s["name"] for s in recorded[str(failing.id)]["stages"]] == list(STAGES)


def assert_reported_with_failures(client: SyncPrefectClient, failing: FlowRun) -> None:
    """What the UI shows of the run with three unreadable files: state, stage lines, task states, artifact."""
    done = final_state(client, failing)
    assert done.is_completed() and done.name == "Completed with failures", done
    assert done.message == (
        "3 files ingested, 0 unchanged, 3 failed: broken.pdf: not a readable PDF: Stream has ended unexpectedly; "
        "empty.md: empty file; latin1.txt: not valid UTF-8 (byte 3)."
    )
    lines = messages(client, failing, "reports: ")
    assert any(line.startswith("Queued behind run: ") for line in lines), lines
    for expected in ("load: 3 files read, 3 failed", "select-changed: 3 new or changed, 0 unchanged", "reports: "):
        assert any(line.startswith(expected) for line in lines), (expected, lines)
    assert not any("Traceback" in line for line in lines)
    tasks = client.read_task_runs(task_run_filter=TaskRunFilter(flow_run_id=TaskRunFilterFlowRunId(any_=[failing.id])))
    assert {t.name.rsplit("-", 1)[0] for t in tasks if t.state is not None and t.state.is_completed()} >= set(STAGES)

    artifacts = client.read_artifacts(
        artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[failing.id]))
    )
    report = next(a for a in artifacts if a.key == "agrag-ingest-report")
    assert report.type == "markdown" and isinstance(report.data, str)
    assert "| `broken.pdf` | **failed** |  | not a readable PDF: Stream has ended unexpectedly |" in report.data
    assert "| `latin1.txt` | **failed** |  | not valid UTF-8 (byte 3) |" in report.data
    assert "| load | 3 files read, 3 failed |" in report.data and "### Pruned" in report.data


def test_a_refused_ui_run_fails_with_one_message_naming_the_form_field(
    served: Serve, client: SyncPrefectClient, root: Path
) -> None:
    elsewhere = start({"folder": str(notes(root / "elsewhere")), "data_dir": str(root / "other-data")})
    nowhere = start({"folder": str(root / "nowhere")})
    typo = start({"folder": str(notes(root / "typo")), "overrides": ["ingest.chunker.max_chrs=10"]})

    other_dir = final_state(client, elsewhere)
    assert other_dir.is_failed() and "(the form's field `data_dir`)" in str(other_dir.message)
    assert f"holds {(root / 'data').resolve()}" in str(other_dir.message)
    no_folder = final_state(client, nowhere)
    assert no_folder.is_failed() and "Set the form's field `folder` to a folder of documents" in str(no_folder.message)
    assert "agrag ingest" not in str(no_folder.message)
    bad_override = final_state(client, typo)
    assert bad_override.is_failed() and "The form's field `overrides`" in str(bad_override.message)
    assert "max_chrs" in str(bad_override.message)
    for flow_run in (elsewhere, nowhere, typo):
        lines = messages(client, flow_run, "Finished in state Failed")
        assert not any("Traceback" in line or "Encountered exception" in line for line in lines), lines
    assert not (root / "other-data").exists()


def test_serve_ingest_refuses_a_data_dir_agrag_serve_holds(
    served: Serve, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGRAG_DATA_DIR", str(root / "data"))
    refused = CliRunner().invoke(app, ["serve-ingest"])
    assert refused.exit_code == 2, refused.output
    message = " ".join(refused.output.split())
    assert f"`agrag serve` (process {served.process.pid}, {served.url}) holds the data dir" in message
    assert "`agrag ingest FOLDER` sends the run to it" in message


def test_kill_9_leaves_no_private_prefect_server(tmp_path: Path) -> None:
    """Without PREFECT_API_URL the runs go to a private Prefect server, which dies with the serve process.

    The process is killed in the middle of an ingestion (its first stage done), the harshest moment.
    """
    env = serve_env(tmp_path / "data", PREFECT_HOME=str(tmp_path / "prefect-client"))
    env.pop("PREFECT_API_URL", None)
    serve = Serve(tmp_path / "data", env=env)
    url = serve.started()
    try:
        with httpx.Client(base_url=url, timeout=30) as http:
            run = http.post("/v1/ingestions", json={"folder": str(notes(tmp_path / "notes"))}).json()
            deadline = time.monotonic() + 120
            while not any(s["name"] == "load" and s["state"] == "completed" for s in run["stages"]):
                assert time.monotonic() < deadline and run["state"] in ("queued", "running"), run
                time.sleep(0.1)
                run = http.get(f"/v1/ingestions/{run['id']}").json()
        assert run["prefect_flow_run_id"], "the run is a flow run of the private Prefect server"
        children = _children(serve.process.pid)
        assert len(children) == 1 and "prefect.server.api.server:create_app" in _command(children[0])
    finally:
        serve.process.kill()
        serve.finish()
    deadline = time.monotonic() + 5
    while _alive(children[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(children[0]), "the private Prefect server outlived agrag serve"


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _command(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z" and os.path.exists(f"/proc/{pid}")
