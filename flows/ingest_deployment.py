"""The ingestion flow as a Prefect deployment, so runs can be started from the Prefect UI or API."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from pathlib import Path
from typing import Any, cast

from prefect.client.orchestration import get_client
from prefect.deployments.runner import RunnerDeployment
from prefect.exceptions import TerminationSignal
from prefect.runner import Runner
from prefect.settings import PREFECT_API_URL, PREFECT_UI_URL
from prefect.types import BANNED_CHARACTERS
from prefect.types.entrypoint import EntrypointType

from agrag.components.errors import ConfigError
from agrag.flows.ingest_flow import ingest_flow

DEPLOYMENT_NAME = "agrag-ingest"
TAGS = ["agrag", "ingest"]
LOCAL_API_URL = "http://127.0.0.1:4200/api"
EXAMPLE_OVERRIDES = ["ingest.chunker.max_chars=800"]

DESCRIPTION = """Ingest a folder of documents into agrag's knowledge graph and vector stores.

Served by `agrag serve`, which runs each run inside the server, one at a time with its other ingestions, while its
searches keep answering; or by `agrag serve-ingest` where no server holds the data dir.

Parameters:
- folder: the folder to ingest (.txt, .md, .rst, .html, .pdf, .csv) on the machine that serves this deployment; a
  relative path is read from the folder the serving process was started in, or from AGRAG_FILES_ROOT when that is
  set (and then the folder must lie inside it).
- overrides: Hydra overrides as a list, for example ["ingest/extractor=llm", "ingest.max_llm_calls=5000"]: plain
  KEY=VALUE of the ingestion's settings (chunker, extractor, ontology, resolution, communities, plans and limits),
  never a ${...} interpolation; a file (ingest.extractor.path) only as an absolute path inside AGRAG_FILES_ROOT.
- data_dir: where the stores are written. A run of `agrag serve` writes only the data dir that server holds (the
  default); leave it as it is.
- files: (optional) only these files of the folder, as paths relative to it, e.g. ["q3/report.md"]; empty: the whole
  folder. The folder's other documents stay as they are; a chosen file gets the same document id as in a whole-folder
  run.

Every stage is a task and logs its one-line result. The run publishes an ingest report artifact (each file ingested,
unchanged or failed with the reason; the stage table; what the ontology pruned; the LLM estimate and fallbacks) and
ends Completed, "Completed with failures" (naming the files that could not be read), Failed with one message, or
Cancelled. A run that waits for another ingestion of the same data dir shows "Queued" and which run it waits for.
Cancel stops a run at its next safe point: what it committed stays, and running the same folder again resumes where
it stopped (unchanged files are skipped)."""


def deployment_full_name(name: str = DEPLOYMENT_NAME) -> str:
    """What ``prefect deployment run`` and ``run_deployment`` call the deployment: ``flow name/deployment name``."""
    return f"{ingest_flow.name}/{name}"


def check_deployment_name(name: str) -> None:
    """Refuse a deployment name Prefect would reject, before Prefect starts.

    Raises:
        ConfigError: the name is empty or holds one of the characters Prefect does not allow in names.
    """
    banned = sorted(set(name) & set(BANNED_CHARACTERS))
    if not name.strip() or banned:
        raise ConfigError(
            f"{name!r} cannot be a deployment name: Prefect does not allow empty names or the characters "
            f"{' '.join(BANNED_CHARACTERS)} in them. Choose another --name, for example --name nightly."
        )


def example_run_command(name: str = DEPLOYMENT_NAME) -> str:
    """A shell command that starts a run of the deployment with a folder and an override."""
    return (
        f"prefect deployment run '{deployment_full_name(name)}' --param folder=/path/to/your/documents "
        f"--param 'overrides={json.dumps(EXAMPLE_OVERRIDES)}'"
    )


def prefect_api_url() -> str:
    """The Prefect API that ``serve_ingest`` registers with: ``PREFECT_API_URL`` from the environment or profile.

    Raises:
        ConfigError: no API URL is set, or nothing answers at it.
    """
    url = PREFECT_API_URL.value()
    if not url:
        # Without a URL Prefect starts a temporary server inside this process, which no UI can reach.
        raise ConfigError(
            "No Prefect server is configured, so the Prefect UI could not see this deployment. Start a server in "
            "another terminal with `prefect server start`, then run "
            f"`prefect config set PREFECT_API_URL={LOCAL_API_URL}` (or export PREFECT_API_URL={LOCAL_API_URL}) "
            "and run `agrag serve-ingest` again."
        )
    _check_reachable(str(url))
    return str(url)


def prefect_ui_url() -> str | None:
    """The Prefect UI's address for the configured API, if Prefect can tell."""
    ui = PREFECT_UI_URL.value()
    return str(ui) if ui else None


def _check_reachable(url: str) -> None:
    with get_client(sync_client=True) as client:
        problem = client.api_healthcheck()
    if problem is not None:
        raise ConfigError(
            f"No Prefect server answers at PREFECT_API_URL={url} ({type(problem).__name__}). Start it with "
            "`prefect server start` in another terminal, or set PREFECT_API_URL to the address of your server "
            "(`prefect config set PREFECT_API_URL=...`)."
        )


def default_parameters(data_dir: Path) -> dict[str, Any]:
    """The parameters a run from the UI starts with: no overrides, this data dir (absolute, so the UI shows it)."""
    return {"overrides": [], "data_dir": str(data_dir.expanduser().resolve())}


def serve_ingest(data_dir: Path, name: str = DEPLOYMENT_NAME, *, limit: int | None = 1) -> None:
    """Register the ``agrag-ingest`` flow as deployment ``name`` and run its flow runs until interrupted.

    Each run executes in a ``python -m prefect.engine`` subprocess that imports the flow by its module path, with
    this process's environment and working directory. This blocks until Ctrl+C or SIGTERM.

    Args:
        data_dir: The data dir runs write into unless a run sets ``data_dir`` itself.
        name: The deployment's name; its full name is ``agrag-ingest/<name>``.
        limit: How many runs may execute at once (None: no limit); further runs wait their turn.
    """
    # Not `ingest_flow.serve`: that runs the in-memory flow, which cloudpickle copies by value without the module
    # globals its postponed annotations name (`Sequence`), so Prefect's parameter validation fails in the run.
    deployment = cast(
        RunnerDeployment,  # called outside an event loop, to_deployment returns the deployment, not a coroutine
        ingest_flow.to_deployment(
            name,
            description=DESCRIPTION,
            parameters=default_parameters(data_dir),
            tags=TAGS,
            entrypoint_type=EntrypointType.MODULE_PATH,
        ),
    )
    runner = Runner(name=name, limit=limit)
    runner.add_deployment(deployment)
    # Ctrl+C takes SIGTERM's way out, which marks a run in progress Cancelled; Prefect's own Ctrl+C handling leaves
    # it shown as Running in the UI although its process is gone.
    signal.signal(signal.SIGINT, runner.handle_sigterm)
    with contextlib.suppress(KeyboardInterrupt, TerminationSignal):
        asyncio.run(runner.start())
