"""The finalize flow (``agrag-finalize``): rebuild the communities and reports that manual ingestions left stale.

``finalize_into`` (``flows/finalize_flow.py``) does the work against open stores; this flow opens the data dir,
records the run in its run registry (kind ``finalize``) and ends in one clear Prefect state, as the ingest, delete
and re-extraction flows do. ``agrag finalize`` runs it in-process, or ``agrag serve`` queues it (``POST
/v1/finalize``, the MCP tool ``finalize``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from prefect import flow
from prefect.client.schemas.objects import State
from prefect.states import Completed

from agrag.components.data_models.ingestion_run import RunKind
from agrag.components.errors import AgragError
from agrag.flows.finalize_flow import FinalizeReport, finalize_into
from agrag.flows.ingest_control import IngestControl
from agrag.flows.run_context import current_run, requester, tracked_run
from agrag.flows.run_inputs import check_overrides, run_settings
from agrag.flows.run_outcome import ended, failed_state, quiet_engine_tracebacks, record
from agrag.pipelines.ingest_components import reports_use_llm
from agrag.pipelines.runtime import Runtime, check_ingested, runtime_for

FINALIZE_TARGET = "communities and reports"


@flow(name="agrag-finalize")
def finalize_flow(
    overrides: Sequence[str] = (), *, progress_bar: bool = False, data_dir: str | None = None
) -> State[FinalizeReport]:
    """Rebuild stale communities and reports of the data dir of ``AGRAG_DATA_DIR`` (or ``data_dir``).

    See ``finalize_into``. Ends Completed with its one-line message (also when nothing was stale), Failed with
    agrag's message, or Cancelled (stopped before a stage; the communities stay stale); ``run_finalize`` returns the
    report or raises.

    Args:
        overrides: Hydra overrides, for example ``["ingest.communities.max_levels=2"]``.
        progress_bar: Show progress bars.
        data_dir: The data dir; empty: ``AGRAG_DATA_DIR`` of the process running the flow.
    """
    quiet_engine_tracebacks()
    source, outer = requester(), current_run()
    try:
        settings = run_settings(data_dir, None, source)
        check_ingested(settings.agrag)
        check_overrides(overrides, settings, source)
        with (
            runtime_for(overrides, settings) as runtime,
            tracked_run(runtime.runs, RunKind.FINALIZE, FINALIZE_TARGET, overrides) as run,
        ):
            control = run.control
            return ended(run, lambda: _finalize_run(overrides, runtime, control, progress_bar=progress_bar))
    except AgragError as exc:  # before the run was recorded: a bad override or data dir, a locked data dir
        return record(outer, failed_state(exc))


def _finalize_run(
    overrides: Sequence[str], runtime: Runtime, control: IngestControl | None, *, progress_bar: bool
) -> tuple[State[FinalizeReport], FinalizeReport]:
    config = runtime.config_for(overrides)
    if config.ingest.communities.enabled:
        reports_use_llm(config.ingest.communities, runtime.llm)  # reports=llm without an LLM fails before any work
    embedder = runtime.ingest_embedder(progress_bar)
    report = finalize_into(config, runtime.store, embedder, llm=runtime.llm, progress=progress_bar, control=control)
    return Completed(data=report, message=report.message), report


def run_finalize(
    overrides: Sequence[str] = (), data_dir: str | None = None, *, progress_bar: bool = False
) -> FinalizeReport:
    """Call ``finalize_flow`` and return its report, or raise the error it ended with (an ``AgragError``).

    Usage:
        ```python
        run_ingest("docs/", ["ingest.finalize=manual"])
        report = run_finalize()
        for line in finalize_lines(report):
            print(line)
        ```
    """
    final = finalize_flow(list(overrides), progress_bar=progress_bar, data_dir=data_dir, return_state=True)
    # the flow returns its final state, which Prefect makes the run's state: the typed result is one level down
    return cast("State[FinalizeReport]", final).result()


def finalize_lines(report: FinalizeReport) -> list[str]:
    """What ``agrag finalize`` prints: the message, then the reports by method when reports were written."""
    lines = [report.message]
    if report.reports_by_method:
        methods = ", ".join(f"{n} {method}" for method, n in sorted(report.reports_by_method.items()))
        lines.append(f"reports: {methods} ({report.reports_reused} reused)")
    return lines
