"""What a restarted `agrag serve` does with the deployment runs a killed one left behind (in-process, real API)."""

from collections.abc import Iterator
from pathlib import Path
from typing import cast
from uuid import UUID

import pytest
from prefect import task
from prefect.client.orchestration import get_client
from prefect.deployments.runner import RunnerDeployment
from prefect.states import Pending, Running
from prefect.types.entrypoint import EntrypointType

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.flows.ingest_deployment import default_parameters
from agrag.flows.ingest_flow import ingest_flow
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.service.server.ingestion_queue import IngestionQueue
from agrag.service.server.served_deployment import KILLED_BEFORE_START, KILLED_WHILE_RUNNING, ServedDeployment
from tests.service.conftest import settings_of

NAME = "recovery-test"


@task(name="embed")
def stage() -> None:
    """Stands for the stage task the killed run was in."""


@pytest.fixture
def runtime(tmp_path: Path, embedder: SentenceTransformersTextEmbedder, prefect_harness: None) -> Iterator[Runtime]:
    with open_runtime([], settings_of(tmp_path / "data"), require_data=False, embedder=embedder) as opened:
        yield opened


def test_a_restart_ends_the_runs_a_killed_server_left_and_only_those_of_its_data_dir(
    runtime: Runtime, tmp_path: Path
) -> None:
    data_dir = runtime.data_dir
    deployment = cast(
        RunnerDeployment,
        ingest_flow.to_deployment(
            NAME, parameters=default_parameters(data_dir), entrypoint_type=EntrypointType.MODULE_PATH
        ),
    )
    deployment_id = cast(UUID, deployment.apply())
    with get_client(sync_client=True) as client:
        running = client.create_flow_run_from_deployment(deployment_id, parameters={"folder": "notes"})
        client.set_flow_run_state(running.id, Running(), force=True)
        in_stage = client.create_task_run(stage, running.id, "0", state=Running())
        queued = client.create_flow_run_from_deployment(deployment_id, parameters={"folder": "notes"})
        client.set_flow_run_state(queued.id, Pending(name="Queued", message="Queued behind run ..."), force=True)
        elsewhere = client.create_flow_run_from_deployment(
            deployment_id, parameters={"folder": "notes", "data_dir": str(tmp_path / "elsewhere")}
        )
        client.set_flow_run_state(elsewhere.id, Running(), force=True)

        served = ServedDeployment(IngestionQueue(runtime), NAME, data_dir)
        served.start()
        served.stop(5)
        assert served.deployment_id == deployment_id

        crashed = client.read_flow_run(running.id).state
        assert crashed is not None and crashed.is_crashed() and crashed.message == KILLED_WHILE_RUNNING
        task_state = client.read_task_run(in_stage.id).state
        assert task_state is not None and task_state.is_crashed()
        interrupted = client.read_flow_run(queued.id).state
        assert interrupted is not None and interrupted.is_cancelled() and interrupted.name == "Interrupted"
        assert interrupted.message == KILLED_BEFORE_START
        other = client.read_flow_run(elsewhere.id).state
        assert other is not None and other.is_running(), "a run into another data dir is not this server's"
