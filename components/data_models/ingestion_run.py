"""``IngestionRun``: one write job of a data dir (ingest, delete, re-extraction, finalize), its state and stages."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agrag.components.data_models.immutable import Immutable


class RunKind(StrEnum):
    """What a run writes."""

    INGEST = "ingest"
    DELETE = "delete"
    REEXTRACT = "reextract"  # documents' entities, mentions and relations extracted again in place
    FINALIZE = "finalize"  # communities and reports rebuilt after ingest.finalize=manual ingestions

    @property
    def action(self) -> str:
        """How a run of this kind is named before its target: ``ingest of``, ``re-extraction of``..."""
        return _ACTIONS[self]

    @property
    def doing(self) -> str:
        """What a run of this kind is doing to its target: ``ingesting``, ``re-extracting``..."""
        return _DOING[self]


_ACTIONS = {
    RunKind.INGEST: "ingest of",
    RunKind.DELETE: "delete of",
    RunKind.REEXTRACT: "re-extraction of",
    RunKind.FINALIZE: "finalize of",
}
_DOING = {
    RunKind.INGEST: "ingesting",
    RunKind.DELETE: "deleting",
    RunKind.REEXTRACT: "re-extracting",
    RunKind.FINALIZE: "finalizing",
}


class RunSource(StrEnum):
    """Who started a run."""

    CLI = "cli"  # `agrag ingest` / `agrag delete` working in-process, or sent to a server
    HTTP = "http"  # the HTTP API of `agrag serve`
    PREFECT = "prefect"  # a run of the agrag-ingest deployment, from the Prefect UI or API


class RunState(StrEnum):
    """Where a run is. The last five are final."""

    QUEUED = "queued"  # waiting for the run before it (the data dir has one writer)
    RUNNING = "running"
    COMPLETED = "completed"
    COMPLETED_WITH_FAILURES = "completed_with_failures"  # written, but some files could not be read
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"  # the server stopped during it; the next run resumes from its phase markers

    @property
    def final(self) -> bool:
        """True once the run will not change any more."""
        return self not in (RunState.QUEUED, RunState.RUNNING)


class StageState(StrEnum):
    """Where one stage of a run is."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    SKIPPED = "skipped"
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # the process running it stopped during it (killed, or a server shut down)


@dataclass(frozen=True, slots=True)
class StageStatus(Immutable):
    """One stage of a run (load, chunk, extract, ..., write, communities, reports).

    Attributes:
        name: The stage.
        state: Where it is.
        seconds: Wall time so far (final once the stage ended).
        line: Its one-line result, as the CLI's stage table words it.
    """

    name: str
    state: StageState
    seconds: float = 0.0
    line: str = ""


@dataclass(frozen=True, slots=True)
class IngestionRun(Immutable):
    """One write job: what was asked, who asked, where it is, and what it did.

    Attributes:
        id: The run's id (a Prefect flow run id when Prefect started it).
        kind: ingest, delete, reextract or finalize.
        source: Who started it.
        target: The folder ingested, the document deleted, the documents re-extracted, or what finalize rebuilds.
        overrides: Hydra overrides of the run.
        state: Where it is.
        message: Why it is queued, how it ended, or what went wrong, in one or two sentences.
        stages: Its stages so far, in order.
        queued_behind: While queued, the ids of the runs before it.
        created: When it was asked for (ISO 8601, UTC).
        started: When it started running (ISO 8601, UTC), if it did.
        finished: When it ended (ISO 8601, UTC), if it did.
        report: The run's report as JSON data once finished (``IngestReport``, ``DeleteReport``, ``ReextractReport``
            or ``FinalizeReport``, by ``kind``).
        prefect_flow_run_id: The Prefect flow run that executed it, if any.
        error: For a failed run, the kind of agrag error that ended it (e.g. ``ConfigError``), so a client can
            end the same way as an in-process command would.
    """

    id: str
    kind: RunKind
    source: RunSource
    target: str
    overrides: tuple[str, ...] = ()
    state: RunState = RunState.QUEUED
    message: str = ""
    stages: tuple[StageStatus, ...] = ()
    queued_behind: tuple[str, ...] = ()
    created: str = ""
    started: str = ""
    finished: str = ""
    report: dict[str, object] | None = None
    prefect_flow_run_id: str = ""
    error: str = ""
