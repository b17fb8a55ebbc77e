"""How the CLI shows search results, traces and ingestion reports."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from rich.console import Console
from rich.table import Table

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.search_result import SearchResult
from agrag.components.data_models.search_trace import SearchTrace
from agrag.flows.ingest_report import IngestReport

LABEL_WIDTH = 44


def item_label(result: SearchResult) -> str:
    """A one-line label: the entity's name, or the start of the chunk's text."""
    item = result.item
    if isinstance(item, Entity):
        return item.name
    if isinstance(item, Chunk):
        lines = item.text.splitlines()
        body = lines[1:] if len(lines) > 1 and lines[0].startswith("#") else lines  # the source column has headings
        return " ".join(" ".join(body).split())[: LABEL_WIDTH * 2]
    return item.id


def item_source(result: SearchResult) -> str:
    """Where the item comes from: a chunk's heading path, an entity's label."""
    item = result.item
    if isinstance(item, Chunk):
        return item.heading
    if isinstance(item, Entity):
        return item.label
    return ""


def results_table(results: list[SearchResult], title: str) -> Table:
    """The ranked results as a table: method, score, item type, label, source."""
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("method")
    table.add_column("score", justify="right")
    table.add_column("type")
    table.add_column("label", no_wrap=True, overflow="ellipsis", max_width=LABEL_WIDTH)
    table.add_column("source")
    for rank, result in enumerate(results, start=1):
        table.add_row(
            str(rank),
            "+".join(result.methods) or result.method,
            f"{result.score:.4f}",
            type(result.item).__name__,
            item_label(result),
            item_source(result),
        )
    return table


def trace_table(trace: SearchTrace) -> Table:
    """One row per method: whether it ran, what it found, how long it took."""
    table = Table(
        title=f"trace: recipe {trace.recipe}, {trace.fused} fused, {trace.returned} returned, "
        f"{trace.elapsed_ms:.0f} ms",
        title_justify="left",
    )
    for column in ("method", "status", "results", "ms", "error"):
        table.add_column(column)
    for status in trace.methods:
        table.add_row(
            status.method, "ok" if status.ok else "FAILED", str(status.count), f"{status.elapsed_ms:.1f}", status.error
        )
    return table


def results_json(results: list[SearchResult], trace: SearchTrace | None) -> str:
    """Results (and the trace) as JSON."""
    rows: list[dict[str, Any]] = [
        {
            "rank": i,
            "method": r.method,
            "methods": list(r.methods),
            "score": r.score,
            "type": type(r.item).__name__,
            "item": asdict(r.item),
        }
        for i, r in enumerate(results, start=1)
    ]
    payload: dict[str, Any] = {"results": rows}
    if trace is not None:
        payload["trace"] = asdict(trace)
    return json.dumps(payload, indent=2, ensure_ascii=False)


def print_ingest_report(console: Console, report: IngestReport) -> None:
    """The summary printed at the end of ``agrag ingest``."""
    console.print(
        f"[bold]Ingested {report.folder}[/bold]: {report.documents_seen} files read, "
        f"{report.documents_ingested} new or changed, {report.documents_unchanged} unchanged, "
        f"{len(report.failures)} failed."
    )
    if not report.documents_seen and not report.failures:
        console.print(f"[yellow]No .md, .markdown or .txt files were found under {report.folder}.[/yellow]")
    stages = Table(title="this run", title_justify="left")
    stages.add_column("stage")
    stages.add_column("seconds", justify="right")
    for stage, seconds in report.stage_seconds.items():
        stages.add_row(stage, f"{seconds:.2f}")
    console.print(stages)
    if report.documents_ingested:
        console.print(
            f"chunks written {report.chunks_written} (superseded {report.chunks_superseded}), entities "
            f"{report.entities_found} ({report.entities_new} new), relations {report.relations_found}"
        )
    totals = Table(title="store now holds", title_justify="left")
    totals.add_column("table")
    totals.add_column("rows", justify="right")
    for name, count in report.counts.items():
        totals.add_row(name, str(count))
    console.print(totals)
    for failure in report.failures:
        console.print(f"[red]failed[/red] {failure.source_path}: {failure.reason}")
