import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId, TaskRunFilter, TaskRunFilterFlowRunId
from prefect.client.schemas.objects import FlowRun, State
from prefect.client.schemas.responses import DeploymentResponse
from prefect.deployments import run_deployment
from prefect.exceptions import ObjectNotFound
from prefect.settings import PREFECT_API_URL, temporary_settings
from typer.testing import CliRunner

from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.loaders.folder_loader import FolderLoader
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.ingest_components import chunker_for
from agrag.pipelines.settings import load_agrag_settings
from agrag.pipelines.store_factory import open_knowledge_store
from agrag.service.cli import app
from tests.support.drained_process import DrainedProcess

AGRAG = str(Path(sys.executable).with_name("agrag"))
DEPLOYMENT = "agrag-ingest/agrag-ingest"
PHASES = ("load", "chunk", "extract", "resolve", "embed", "write", "communities", "reports")
OVERRIDES = ["ingest.chunker.max_chars=800"]


class Serving:
    """A running `agrag serve-ingest` subprocess and what it printed (read all along: ``DrainedProcess``)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self._output = DrainedProcess(process)

    @property
    def stdout(self) -> str:
        return self._output.stdout

    @property
    def stderr(self) -> str:
        return self._output.stderr

    def stop(self, how: signal.Signals = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(how)
        try:
            # The runner's graceful shutdown (cancel the run, pause deployments) took 13 s on a machine loaded 7x.
            self._output.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self._output.wait(timeout=20)


@pytest.fixture
def serving(prefect_harness: None, tmp_path: Path) -> Iterator[Serving]:
    """`agrag serve-ingest` against the harness's Prefect server, started in tmp_path (AGRAG_* unset)."""
    env = {
        # as a user's shell: the tests' PREFECT_LOGGING_LEVEL=WARNING would hide the runs' logs from the UI
        **{k: v for k, v in os.environ.items() if k != "PREFECT_LOGGING_LEVEL"},
        "PREFECT_API_URL": str(PREFECT_API_URL.value()),
        "PREFECT_HOME": str(tmp_path / "prefect"),
        # The runner looks for new runs every 10 s by default.
        "PREFECT_RUNNER_POLL_FREQUENCY": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HAYSTACK_TELEMETRY_ENABLED": "False",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }
    process = subprocess.Popen(
        [AGRAG, "serve-ingest"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    served = Serving(process)
    try:
        yield served
    finally:
        served.stop()


def wait_for_deployment(client: SyncPrefectClient, serving: Serving, timeout: float = 90) -> DeploymentResponse:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return client.read_deployment_by_name(DEPLOYMENT)
        except ObjectNotFound:
            if serving.process.poll() is not None:
                serving.stop()
                pytest.fail(f"agrag serve-ingest exited with {serving.process.returncode}:\n{serving.stderr}")
            if time.monotonic() > deadline:
                pytest.fail(f"{DEPLOYMENT} was not registered within {timeout} s")
            time.sleep(0.5)


def completed_phases(client: SyncPrefectClient, flow_run: FlowRun, timeout: float = 30) -> set[str]:
    """Task run names without their suffix ('chunk-3f1' -> 'chunk') whose runs completed.

    The server records task run states from events, shortly after the flow run's own final state.
    """
    deadline = time.monotonic() + timeout
    while True:
        runs = client.read_task_runs(
            task_run_filter=TaskRunFilter(flow_run_id=TaskRunFilterFlowRunId(any_=[flow_run.id]))
        )
        done = {run.name.rsplit("-", 1)[0] for run in runs if run.state is not None and run.state.is_completed()}
        if set(PHASES) <= done or time.monotonic() > deadline:
            return done
        time.sleep(0.5)


def wait_for_state(client: SyncPrefectClient, flow_run: FlowRun, state_type: str, timeout: float = 60) -> State:
    deadline = time.monotonic() + timeout
    while True:
        state = client.read_flow_run(flow_run.id).state
        if state is not None and state.type.value == state_type:
            return state
        if time.monotonic() > deadline:
            pytest.fail(f"flow run {flow_run.name} is {state} after {timeout} s, not {state_type}")
        time.sleep(0.5)


def phase_logged_at_info(client: SyncPrefectClient, flow_run: FlowRun, timeout: float = 30) -> bool:
    """Whether a task of the run sent an INFO log to the server (logs arrive in batches, shortly after the run)."""
    deadline = time.monotonic() + timeout
    while True:
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run.id])))
        if any(log.level == logging.INFO and log.task_run_id for log in logs) or time.monotonic() > deadline:
            return any(log.level == logging.INFO and log.task_run_id for log in logs)
        time.sleep(0.5)


def chunk_count(examples: Path, overrides: list[str]) -> int:
    """How many chunks the configured chunker cuts the examples into, without the flow."""
    config = load_config(overrides).ingest
    loader = FolderLoader(max_bytes=config.loader.max_file_bytes, suffixes=config.loader.suffixes)
    documents: list[LoadedDocument] = loader.run(root=str(examples))["documents"]  # type: ignore[assignment]
    return len(chunker_for(config.chunker).run(documents=documents)["chunks"])


@pytest.mark.slow
def test_a_run_started_through_the_api_ingests_with_its_parameters(
    serving: Serving, tmp_path: Path, examples: Path
) -> None:
    data_dir = tmp_path / "data"
    with get_client(sync_client=True) as client:
        deployment = wait_for_deployment(client, serving)
        assert deployment.parameters == {"overrides": [], "data_dir": str((tmp_path / ".agrag").resolve())}
        assert set(deployment.tags) == {"agrag", "ingest"}
        assert deployment.description and "overrides" in deployment.description

        flow_run: FlowRun = run_deployment(  # type: ignore[assignment]  # sync call: a FlowRun, not a coroutine
            name=DEPLOYMENT,
            parameters={"folder": str(examples), "overrides": OVERRIDES, "data_dir": str(data_dir)},
            timeout=180,
            poll_interval=1,
        )
        assert flow_run.state is not None
        assert flow_run.state.is_completed(), f"{flow_run.state.name}: {flow_run.state.message}\n{serving.stderr}"
        assert set(PHASES) <= completed_phases(client, flow_run)
        assert phase_logged_at_info(client, flow_run), "the UI shows the phases' logs"

        # Ctrl+C while a run is in progress: the run must not stay shown as Running once its process is gone.
        second: FlowRun = run_deployment(  # type: ignore[assignment]
            name=DEPLOYMENT, parameters={"folder": str(examples), "data_dir": str(tmp_path / "other")}, timeout=0
        )
        wait_for_state(client, second, "RUNNING")
        serving.stop(signal.SIGINT)
        assert serving.process.returncode == 0, serving.stderr
        assert wait_for_state(client, second, "CANCELLED").message == "Runner is shutting down."

    assert DEPLOYMENT in serving.stdout
    assert str(PREFECT_API_URL.value()) in serving.stdout
    assert f"prefect deployment run '{DEPLOYMENT}' --param folder=" in serving.stdout
    assert not (tmp_path / ".agrag").exists(), "the run's data_dir replaces the default"

    with_override, default = chunk_count(examples, OVERRIDES), chunk_count(examples, [])
    assert with_override != default, "max_chars=800 must cut the examples differently, or this test proves nothing"
    config = load_config(OVERRIDES)
    settings = load_agrag_settings().model_copy(update={"data_dir": data_dir})
    embedder = SentenceTransformersTextEmbedder(config.embedder.model, config.embedder.device)
    with open_knowledge_store(settings, config.vector_store, embedder) as store:
        counts = store.counts()
    assert counts["Document"] == len(list(examples.iterdir())) == 9
    assert counts["Chunk"] == with_override


def test_serve_ingest_refuses_without_a_prefect_server() -> None:
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        result = CliRunner().invoke(app, ["serve-ingest"])
    assert result.exit_code == 2
    assert "prefect server start" in result.output
    assert "prefect config set PREFECT_API_URL=http://127.0.0.1:4200/api" in result.output


def test_serve_ingest_refuses_a_server_that_does_not_answer() -> None:
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        result = CliRunner().invoke(app, ["serve-ingest"])
    assert result.exit_code == 2
    assert "No Prefect server answers at PREFECT_API_URL=http://127.0.0.1:9/api" in result.output


def test_serve_ingest_refuses_a_name_prefect_would_reject() -> None:
    result = CliRunner().invoke(app, ["serve-ingest", "--name", "nightly/big"])
    assert result.exit_code == 2
    assert "cannot be a deployment name" in result.output
