"""``ServedDeployment``: ``agrag serve`` serves the ``agrag-ingest`` deployment itself, runs in its own process.

A run started from the Prefect UI (or ``run_deployment``) must write through the server's open stores, so it cannot
run in a subprocess as Prefect's ``Runner`` would start it. Instead this poller registers the deployment, asks the
API every second for its scheduled runs, claims each (Scheduled -> Pending, named "Queued" with the runs it waits
for when it must wait) and hands it to the ingestion queue, whose worker runs it in-process with
``prefect.flow_engine.run_flow``: its task states, logs and artifact show in the UI as usual. The poller also
watches the runs it holds: a cancel from the UI removes a queued run or stops a running one at its next safe point.
Runs a killed server left pending or running are ended when the next one starts.
"""

from __future__ import annotations

import contextvars
import datetime
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast
from uuid import UUID

from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import (
    DeploymentFilter,
    DeploymentFilterId,
    FlowRunFilter,
    FlowRunFilterId,
    FlowRunFilterState,
    FlowRunFilterStateType,
    TaskRunFilter,
    TaskRunFilterFlowRunId,
)
from prefect.client.schemas.objects import FlowRun, State, StateType
from prefect.client.schemas.responses import FlowRunResponse
from prefect.deployments.runner import RunnerDeployment
from prefect.exceptions import Abort
from prefect.flow_engine import run_flow
from prefect.logging.loggers import flow_run_logger
from prefect.settings import PREFECT_API_URL
from prefect.states import Cancelled, Crashed, Pending
from prefect.types.entrypoint import EntrypointType
from prefect.utilities.engine import propose_state_sync

from agrag.components.data_models.ingestion_run import IngestionRun, RunKind, RunSource, RunState
from agrag.flows.ingest_deployment import DESCRIPTION, TAGS, default_parameters
from agrag.flows.ingest_flow import ingest_flow
from agrag.flows.run_context import unused_run_id
from agrag.flows.run_outcome import INTERRUPTED
from agrag.service.server.ingestion_queue import IngestionQueue, waiting_message

logger = logging.getLogger(__name__)

T = TypeVar("T")
QUEUED = "Queued"
POLL_SECONDS = 1.0
KILLED_WHILE_RUNNING = (
    "agrag serve stopped (it was killed) while this run was running. Everything it committed stays; run the same "
    "folder again and it resumes from its phase markers."
)
KILLED_BEFORE_START = "agrag serve stopped (it was killed) before this run started; nothing was written. Run it again."


def prefect_api_answers() -> bool:
    """Whether ``PREFECT_API_URL`` is set and a Prefect server answers there (a warning says so when it does not)."""
    url = PREFECT_API_URL.value()
    if not url:
        return False
    with get_client(sync_client=True) as client:
        problem = client.api_healthcheck()
    if problem is not None:
        logger.warning(
            "No Prefect server answers at PREFECT_API_URL=%s (%s): the deployment is not served, and ingestion runs "
            "use a private Prefect server. Start that server and restart agrag serve to see runs in its UI.",
            url,
            type(problem).__name__,
        )
    return problem is None


class ServedDeployment:
    """The ``agrag-ingest`` deployment, served by this process: its runs go through the ingestion queue.

    Usage:
        ```python
        queue = IngestionQueue(runtime)
        queue.add_feeder(ServedDeployment(queue, "agrag-ingest", runtime.data_dir))
        queue.start()          # registers the deployment and starts polling
        ```
    """

    def __init__(self, queue: IngestionQueue, name: str, data_dir: Path, poll_seconds: float = POLL_SECONDS) -> None:
        """Serve deployment ``name`` (full name ``agrag-ingest/<name>``) for runs into ``data_dir``."""
        self.queue = queue
        self.name = name
        self.data_dir = Path(data_dir).resolve()
        self.poll_seconds = poll_seconds
        self.deployment_id: UUID | None = None
        self._owned: dict[UUID, str] = {}  # flow run id -> our run id, while queued or running
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._context = contextvars.copy_context()

    def start(self) -> None:
        """Register the deployment, end runs a killed server left behind, and start polling.

        A deployment that cannot be registered is logged, not raised: the server still serves everything else.
        """
        self._context = contextvars.copy_context()  # Prefect settings of the starting thread (a test harness's too)
        try:
            deployment = cast(
                RunnerDeployment,  # outside an event loop to_deployment returns the deployment, not a coroutine
                ingest_flow.to_deployment(
                    self.name,
                    description=DESCRIPTION,
                    parameters=default_parameters(self.data_dir),
                    tags=TAGS,
                    entrypoint_type=EntrypointType.MODULE_PATH,
                ),
            )
            self.deployment_id = cast(UUID, deployment.apply())
            with get_client(sync_client=True) as client:
                self._recover(client)
        except Exception as exc:  # the Prefect API refused or went away: serve the rest anyway
            logger.error("Could not serve the Prefect deployment %s: %s", self.name, exc)
            return
        logger.info("Serving the Prefect deployment %s/%s", ingest_flow.name, self.name)
        self._thread = threading.Thread(
            target=self._context.copy().run, args=(self._poll_forever,), name="agrag-prefect-poller", daemon=True
        )
        self._thread.start()

    def stop(self, timeout_seconds: float) -> None:
        """Stop polling (runs already handed to the queue are the queue's to finish)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_seconds)

    def _poll_forever(self) -> None:
        with get_client(sync_client=True) as client:
            while not self._stop.wait(self.poll_seconds):
                try:
                    self._poll_once(client)
                except Exception as exc:  # the API may be away for a moment: try again at the next poll
                    logger.warning("Polling the Prefect API failed: %s", exc)

    def _poll_once(self, client: SyncPrefectClient) -> None:
        assert self.deployment_id is not None
        now = datetime.datetime.now(datetime.UTC)
        # scheduled_before=now: a run scheduled for later would wait in our single worker, blocking the others
        runs = client.get_scheduled_flow_runs_for_deployments(deployment_ids=[self.deployment_id], scheduled_before=now)
        for flow_run in sorted(runs, key=lambda r: r.next_scheduled_start_time or now):
            if self._stop.is_set():
                return
            self._claim(client, flow_run)
        self._watch_cancels(client)

    def _claim(self, client: SyncPrefectClient, flow_run: FlowRun | FlowRunResponse) -> None:
        """Claim a scheduled run (Pending, or Pending "Queued" with whom it waits for) and queue it."""
        ahead = self.queue.pending()
        proposed: State[Any] = Pending(name=QUEUED, message=waiting_message(ahead)) if ahead else Pending()
        try:
            state = propose_state_sync(client, proposed, flow_run_id=flow_run.id)
        except Abort:  # another process claimed it
            return
        if not state.is_pending():
            return
        if ahead:  # the Logs tab shows no state message: say it there too
            run_logger = flow_run_logger(
                flow_run_id=flow_run.id, flow_run_name=flow_run.name, flow_name=ingest_flow.name
            )
            run_logger.info("%s", state.message)
        parameters = flow_run.parameters or {}
        run = IngestionRun(
            id=unused_run_id(self.queue.registry, str(flow_run.id)),
            kind=RunKind.INGEST,
            source=RunSource.PREFECT,
            target=str(parameters.get("folder", "")),
            overrides=tuple(str(o) for o in parameters.get("overrides") or ()),
            prefect_flow_run_id=str(flow_run.id),
        )
        with self._lock:
            self._owned[flow_run.id] = run.id
        try:
            self.queue.enqueue(
                run,
                lambda: self._execute(flow_run.id),
                on_dropped=lambda state, message: self._dropped(flow_run.id, state, message),
                on_finished=lambda state: self._finished(flow_run.id, state),
            )
        except Exception as exc:  # shutting down: give the run back its end
            self._dropped(flow_run.id, RunState.INTERRUPTED, f"Not started: {exc}")

    def _watch_cancels(self, client: SyncPrefectClient) -> None:
        """A run we hold that the UI cancels: remove it from the queue, or stop it at its next safe point."""
        with self._lock:
            owned = dict(self._owned)
        if not owned:
            return
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=list(owned))))
        for flow_run in runs:
            if flow_run.state is not None and flow_run.state.type in (StateType.CANCELLING, StateType.CANCELLED):
                self.queue.cancel(owned[flow_run.id], "cancelled from the Prefect UI")

    def _execute(self, flow_run_id: UUID) -> State[Any]:
        """Run the flow run in this (the queue's worker) thread."""
        with get_client(sync_client=True) as client:
            flow_run = client.read_flow_run(flow_run_id)
        if flow_run.state is not None and (flow_run.state.is_final() or flow_run.state.type == StateType.CANCELLING):
            return Cancelled(message="Cancelled before it started; nothing was written.")
        # return_type="state": a failed run does not raise here; no error_logger: no second traceback in its logs
        return cast(State[Any], run_flow(ingest_flow, flow_run=flow_run, return_type="state"))

    def _finished(self, flow_run_id: UUID, state: State[Any] | None) -> None:
        """End a run the flow could not end itself (report point 3: a cancel after its last stage)."""
        with self._lock:
            self._owned.pop(flow_run_id, None)
        with get_client(sync_client=True) as client:
            current = client.read_flow_run(flow_run_id).state
            if current is None or current.is_final():
                return
            if current.type == StateType.CANCELLING:
                done = state.message if state is not None and state.message else "it had finished its work"
                ending: State[Any] = Cancelled(message=f"The cancel came after the last stage; the run ended: {done}")
            else:
                ending = Crashed(message="The run ended without a final state; see the log of agrag serve.")
            propose_state_sync(client, ending, flow_run_id=flow_run_id, force=True)

    def _dropped(self, flow_run_id: UUID, state: RunState, message: str) -> None:
        """The queue removed the run before it started: end it in Prefect too (from whichever thread removed it)."""
        with self._lock:
            self._owned.pop(flow_run_id, None)
        name = INTERRUPTED if state == RunState.INTERRUPTED else "Cancelled"

        def end() -> None:
            with get_client(sync_client=True) as client:
                propose_state_sync(client, Cancelled(name=name, message=message), flow_run_id=flow_run_id, force=True)

        self._in_prefect_context(end)

    def _recover(self, client: SyncPrefectClient) -> None:
        """End the runs into this data dir that a killed server left pending or running (their tasks too)."""
        assert self.deployment_id is not None
        left = client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[self.deployment_id])),
            flow_run_filter=FlowRunFilter(
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PENDING, StateType.RUNNING]))
            ),
        )
        for flow_run in left:
            asked = (flow_run.parameters or {}).get("data_dir") or str(self.data_dir)
            if flow_run.state is None or Path(str(asked)).expanduser().resolve() != self.data_dir:
                continue  # another process's run (a Runner of the same deployment name, another data dir)
            if flow_run.state.type == StateType.RUNNING:
                ending: State[Any] = Crashed(message=KILLED_WHILE_RUNNING)
                for task_run in client.read_task_runs(
                    task_run_filter=TaskRunFilter(flow_run_id=TaskRunFilterFlowRunId(any_=[flow_run.id]))
                ):
                    if task_run.state is not None and not task_run.state.is_final():
                        client.set_task_run_state(task_run.id, Crashed(message=KILLED_WHILE_RUNNING), force=True)
            else:
                ending = Cancelled(name=INTERRUPTED, message=KILLED_BEFORE_START)
            propose_state_sync(client, ending, flow_run_id=flow_run.id, force=True)
            logger.info("Ended run %s that a stopped server left %s", flow_run.name, flow_run.state.name)

    def _in_prefect_context(self, call: Callable[[], T]) -> T:
        """Run ``call`` with the Prefect settings this deployment was started with."""
        return self._context.copy().run(call)
