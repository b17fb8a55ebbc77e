"""How an ingestion or delete flow ends: the Prefect state it returns, and the same outcome in the run registry.

A flow returns the final state it builds here instead of raising, so the Prefect UI shows one clear message and no
traceback: ``Failed`` with agrag's message, ``Completed`` (named "Completed with failures" when files could not be
read), ``Cancelled`` (named "Interrupted" when the server shut down). Prefect makes a returned state the run's final
state; a direct call of the flow still returns the report, or raises the original error (the state's data).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from prefect.client.schemas.objects import State, StateType
from prefect.states import Cancelled, Completed, Failed
from pydantic import TypeAdapter

from agrag.components.data_models.ingestion_run import RunState
from agrag.components.errors import AgragError, IngestInterruptedError
from agrag.components.safe_text import printable
from agrag.flows.ingest_report import IngestReport
from agrag.flows.run_context import RunContext

T = TypeVar("T")

COMPLETED_WITH_FAILURES = "Completed with failures"
INTERRUPTED = "Interrupted"
FAILURES_NAMED = 5  # failed files named in the state message; the artifact lists them all


def ingest_summary(report: IngestReport) -> str:
    """One or two sentences on what an ingestion did: the state message of its run."""
    failed = len(report.failures)
    done = f"{_files(report.documents_ingested)} ingested, {report.documents_unchanged} unchanged"
    if failed:
        named = "; ".join(f"{_name(f.source_path)}: {_name(f.reason)}" for f in report.failures[:FAILURES_NAMED])
        more = f"; and {failed - FAILURES_NAMED} more (see the ingest report)" if failed > FAILURES_NAMED else ""
        return f"{done}, {failed} failed: {named}{more}."
    if not report.documents_seen:
        return f"No supported documents were found in {report.folder}; nothing was ingested."
    if not report.documents_ingested:
        return f"Nothing new: all {_files(report.documents_seen)} were unchanged and skipped."
    if empty := report.without_text:
        named = "; ".join(_name(f.source_path) for f in empty[:FAILURES_NAMED])
        more = f" and {len(empty) - FAILURES_NAMED} more" if len(empty) > FAILURES_NAMED else ""
        return f"{done}; warning: {_files(len(empty))} had no text outside headings (0 chunks): {named}{more}."
    return f"{done}."


def _name(text: str) -> str:
    """A file name (or a reason quoting one) on one line: the message is a log line and a table cell."""
    return printable(text, multiline=False)


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def ingest_state(report: IngestReport) -> State[IngestReport]:
    """The final state of an ingestion that ran to the end: Completed, or "Completed with failures"."""
    if report.failures:
        return Completed(data=report, name=COMPLETED_WITH_FAILURES, message=ingest_summary(report))
    return Completed(data=report, message=ingest_summary(report))


def stopped_state(exc: IngestInterruptedError, context: RunContext | None) -> State[Any]:
    """The final state of a run stopped at a safe point: Cancelled, or Cancelled named "Interrupted" (shutdown)."""
    name = INTERRUPTED if context is not None and context.stop_state == RunState.INTERRUPTED else "Cancelled"
    return Cancelled(name=name, message=str(exc), data=exc)


def failed_state(exc: AgragError) -> State[Any]:
    """The final state of a run agrag refused or could not finish: its one-line message, no traceback."""
    return Failed(message=str(exc), data=exc)


def run_state(state: State[Any]) -> RunState:
    """The registry's state for a final Prefect state."""
    if state.type == StateType.COMPLETED:
        return RunState.COMPLETED_WITH_FAILURES if state.name == COMPLETED_WITH_FAILURES else RunState.COMPLETED
    if state.type in (StateType.CANCELLED, StateType.CANCELLING):
        return RunState.INTERRUPTED if state.name == INTERRUPTED else RunState.CANCELLED
    return RunState.FAILED


def report_data(report: object) -> dict[str, object]:
    """A report dataclass (``IngestReport``, ``DeleteReport``) as JSON data, as the registry keeps it."""
    data = _adapter(type(report)).dump_python(report, mode="json")
    assert isinstance(data, dict)
    return data


def report_from(data: dict[str, object], kind: type[T]) -> T:
    """A report kept by the registry, as its dataclass again."""
    loaded: T = _adapter(kind).validate_python(data)
    return loaded


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(kind: type[Any]) -> TypeAdapter[Any]:
    if kind not in _ADAPTERS:
        _ADAPTERS[kind] = TypeAdapter(kind)
    return _ADAPTERS[kind]


def record(context: RunContext | None, state: State[Any], report: object | None = None) -> State[Any]:
    """Record the flow's final ``state`` (and report) in the run registry, if the flow runs in a run context."""
    if context is not None:
        failure = state.data if state.type == StateType.FAILED and isinstance(state.data, BaseException) else None
        error = type(failure).__name__ if failure is not None else ""
        context.finish(
            run_state(state), state.message or state.name or "", report_data(report) if report else None, error
        )
    return state


def ended(context: RunContext | None, body: Callable[[], tuple[State[Any], object | None]]) -> State[Any]:
    """Run ``body`` (which returns the final state and the report) and record how it ended.

    agrag's own errors end the run Failed with their message; an ``IngestInterruptedError`` ends it Cancelled or
    Interrupted. Anything else is a bug: it propagates, with its traceback.
    """
    try:
        state, report = body()
    except IngestInterruptedError as exc:
        state, report = stopped_state(exc, context), None
    except AgragError as exc:
        state, report = failed_state(exc), None
    return record(context, state, report)


class QuietAgragFailures(logging.Filter):
    """Keep Prefect from logging tracebacks of agrag's own errors: their message says everything a user needs.

    A stage task that raises an ``AgragError`` (a budget refused, a stop at a safe point) is logged by Prefect's task
    engine with the error's traceback; the record keeps its one line, without the traceback. In a ``python -m
    prefect.engine`` subprocess (the Runner of ``agrag serve-ingest``) the engine also logs "Engine execution exited
    with unexpected exception" with a traceback after a run that returned ``Failed(data=error)``; that record goes.
    Bugs (any other exception) keep their traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """False for the engine's closing record of an agrag error; other records of one lose their traceback."""
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, AgragError):
            return True
        if str(record.msg).startswith("Engine execution exited"):
            return False
        record.exc_info, record.exc_text = None, None
        return True


def quiet_engine_tracebacks() -> None:
    """Install ``QuietAgragFailures`` on Prefect's flow and task run loggers (once)."""
    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, QuietAgragFailures) for f in logger.filters):
            logger.addFilter(QuietAgragFailures())
