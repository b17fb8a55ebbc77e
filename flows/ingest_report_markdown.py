"""The ingest report as a Prefect markdown artifact: what a Prefect UI user reads after a run."""

from __future__ import annotations

from uuid import UUID

from prefect.artifacts import create_markdown_artifact
from prefect.context import FlowRunContext

from agrag.components.data_models.ontology import PrunedReport
from agrag.components.safe_text import printable
from agrag.flows.ingest_report import FAILED, IngestReport, stage_lines
from agrag.pipelines.ontology_hint import hint_markdown

ARTIFACT_KEY = "agrag-ingest-report"  # Prefect keys: lowercase letters, digits and dashes
FILES_LISTED = 200  # past this, the files table shows every failed file and then the first others


def _cell(text: object) -> str:
    """A markdown table cell: pipes escaped, one line."""
    return " ".join(str(text).replace("|", "\\|").split())


def _name(path: str) -> str:
    """A file name as one line, its control characters (a newline too) shown as escapes, as on the CLI."""
    return printable(path, multiline=False)


def _table(header: tuple[str, ...], rows: list[tuple[object, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


def _files(report: IngestReport) -> list[str]:
    failed = [f for f in report.files if f.status == FAILED]
    others = [f for f in report.files if f.status != FAILED]
    shown = failed + others[: max(0, FILES_LISTED - len(failed))]
    rows: list[tuple[object, ...]] = [
        (f"`{_name(f.source_path)}`", f"**{f.status}**" if f.status == FAILED else f.status, f.plan, f.reason)
        for f in shown
    ]
    lines = ["### Files", "", *_table(("file", "status", "plan", "reason"), rows)]
    if len(shown) < len(report.files):
        lines += ["", f"... and {len(report.files) - len(shown)} more ingested or unchanged files."]
    return lines


def _stages(report: IngestReport) -> list[str]:
    lines = stage_lines(report)
    rows: list[tuple[object, ...]] = [
        (stage, lines.get(stage, ""), f"{seconds:.2f}") for stage, seconds in report.stage_seconds.items()
    ]
    return ["### Stages", "", *_table(("stage", "result", "seconds"), rows)]


def _pruned(pruned: PrunedReport) -> list[str]:
    if pruned.empty:
        return ["### Pruned", "", "Nothing: every entity label and relation pattern is in the ontology."]
    rows: list[tuple[object, ...]] = [
        ("entity label", label.label, label.count, label.example) for label in pruned.dropped_labels
    ]
    rows += [
        (p.what, f"({p.source_label})-[{p.type}]->({p.target_label})", p.count, p.example)
        for p in pruned.undeclared_patterns
    ]
    if pruned.unknown_endpoints:
        rows.append(("relation endpoint", "not an entity", pruned.unknown_endpoints, pruned.unknown_endpoint_example))
    hint = hint_markdown(pruned)
    table = ["### Pruned (not in the ontology)", "", *_table(("what", "type", "count", "example"), rows)]
    return [*table, "", *hint] if hint else table


def _llm(report: IngestReport) -> list[str]:
    lines = []
    if report.llm_estimate is not None:
        lines.append(f"- LLM extraction estimate: {report.llm_estimate.summary()}")
    if report.llm_calls or report.llm_cache_hits:
        lines.append(f"- LLM: {report.llm_calls} calls, {report.llm_cache_hits} answered from the cache")
    if report.report_fallbacks:
        lines.append(
            f"- {report.report_fallbacks} community reports fell back to extractive summaries (the LLM failed)"
        )
    if report.extraction_failures:
        shown = report.extraction_failures[:10]
        lines.append(f"- {len(report.extraction_failures)} chunks got no entities, e.g.:")
        lines += [f"  - `{_cell(f.chunk_id)}`: {_cell(f.reason)}" for f in shown]
    return ["### LLM", "", *lines] if lines else []


def _notes(report: IngestReport) -> list[str]:
    lines = []
    if report.communities_deferred:
        lines.append("- communities: deferred, run `agrag finalize` (ingest.finalize=manual)")
    if report.documents_resumed:
        resumed = ", ".join(f"{phase} {count}" for phase, count in report.documents_resumed.items())
        lines.append(f"- Resumed an interrupted run; documents whose work was already done, by phase: {resumed}")
    if report.other_settings:
        lines.append(
            f"- {len(report.other_settings)} unchanged files were ingested with other settings and were skipped "
            f"(first: `{_cell(report.other_settings[0])}`); they keep what those settings made of them."
        )
    return ["### Notes", "", *lines] if lines else []


def ingest_report_markdown(report: IngestReport, data_dir: str) -> str:
    """The ingest report as markdown: summary, files with their status and reason, stages, pruned, LLM, totals."""
    summary = (
        f"**{report.documents_seen + len(report.failures)} files**: {report.documents_ingested} ingested, "
        f"{report.documents_unchanged} unchanged, {len(report.failures)} failed, in {report.seconds:.1f} s."
    )
    lines = [f"## Ingest report: `{report.folder}`", "", f"Data dir `{data_dir}`", "", summary, ""]
    for section in (_files(report), _stages(report), _pruned(report.pruned), _llm(report), _notes(report)):
        lines += [*section, ""] if section else []
    totals: list[tuple[object, ...]] = list(report.counts.items())
    lines += ["### The stores now hold", "", *_table(("table", "rows"), totals)]
    return "\n".join(lines) + "\n"


def publish_ingest_report(report: IngestReport, data_dir: str) -> UUID | None:
    """Attach the report to the Prefect run in progress as a markdown artifact (nothing outside a run)."""
    if FlowRunContext.get() is None:
        return None
    artifact = create_markdown_artifact(
        markdown=ingest_report_markdown(report, data_dir),
        key=ARTIFACT_KEY,
        description=f"Ingest report for {report.folder}",
    )
    return artifact if isinstance(artifact, UUID) else None
