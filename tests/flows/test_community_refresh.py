"""Every flow refreshes communities through the shared Prefect tasks, which show as task runs of its flow run."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import TaskRunFilter, TaskRunFilterFlowRunId
from prefect.client.schemas.objects import State

from agrag.components.data_models.document import document_id_for
from agrag.flows.delete_flow import DeleteReport, delete_flow
from agrag.flows.finalize_flow import FinalizeReport
from agrag.flows.finalize_run import finalize_flow
from agrag.flows.ingest_flow import ingest_flow
from agrag.flows.reextract_flow import DEFERRED, reextract_flow
from agrag.flows.reextract_report import ReextractReport, report_lines
from tests.conftest import EXAMPLES

COMMUNITY_TASKS = {"communities", "reports"}


def _completed_tasks(flow_run_id: UUID, expected: set[str]) -> set[str]:
    """The task names of the completed task runs of a flow run, once ``expected`` are among them (or after 30 s).

    Prefect records task runs from the events the flow run sends, so they may reach the API a moment after it ends;
    with nothing ``expected``, this waits for any completed task run.
    """
    deadline = time.monotonic() + 30
    with get_client(sync_client=True) as client:
        while True:
            runs = client.read_task_runs(
                task_run_filter=TaskRunFilter(flow_run_id=TaskRunFilterFlowRunId(any_=[flow_run_id]))
            )
            names = {r.name.rsplit("-", 1)[0] for r in runs if r.state is not None and r.state.is_completed()}
            if (names and expected <= names) or time.monotonic() > deadline:
                return names
            time.sleep(0.5)


def _flow_run_id(state: State[Any]) -> UUID:
    flow_run_id = state.state_details.flow_run_id
    assert flow_run_id is not None
    return flow_run_id


@pytest.mark.slow
def test_reextract_finalize_and_delete_refresh_communities_as_task_runs_of_their_flow_runs(
    prefect_harness: None, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    shutil.copytree(EXAMPLES, folder)
    data_dir = str(tmp_path / "data")
    ingested = ingest_flow(str(folder), data_dir=data_dir, return_state=True)
    assert ingested.is_completed()
    assert _completed_tasks(_flow_run_id(ingested), COMMUNITY_TASKS) >= COMMUNITY_TASKS

    team = document_id_for("team.md", folder.name)
    manual = ["ingest.finalize=manual"]
    reextracted = reextract_flow([team], manual, force=True, data_dir=data_dir, return_state=True)
    report: ReextractReport = reextracted.result()  # type: ignore[assignment]
    assert report_lines(report)[-1] == DEFERRED
    assert _completed_tasks(_flow_run_id(reextracted), set()).isdisjoint(COMMUNITY_TASKS), "deferred"

    finalized = finalize_flow(data_dir=data_dir, return_state=True)
    finalize_report: FinalizeReport = finalized.result()  # type: ignore[assignment]
    assert finalize_report.finalized and finalize_report.communities_by_level
    assert _completed_tasks(_flow_run_id(finalized), COMMUNITY_TASKS) >= COMMUNITY_TASKS

    again = reextract_flow([team], force=True, data_dir=data_dir, return_state=True)
    again_report: ReextractReport = again.result()  # type: ignore[assignment]
    assert again_report.communities_by_level
    assert _completed_tasks(_flow_run_id(again), COMMUNITY_TASKS) >= COMMUNITY_TASKS

    vendors = document_id_for("vendors.html", folder.name)
    deleted = delete_flow(vendors, data_dir=data_dir, return_state=True)
    delete_report: DeleteReport = deleted.result()  # type: ignore[assignment]
    assert delete_report.entities_removed >= 1 and delete_report.communities >= 2
    assert _completed_tasks(_flow_run_id(deleted), COMMUNITY_TASKS) >= COMMUNITY_TASKS
