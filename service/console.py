"""How the CLI shows search results, traces and ingestion reports."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.ontology import PrunedReport
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import MergeLogEntry, ResolutionCandidate
from agrag.components.data_models.resolved_entity import ResolvedEntity
from agrag.components.data_models.search_result import SearchResult
from agrag.components.data_models.search_trace import SearchTrace
from agrag.components.data_models.stored_document import StoredDocument
from agrag.components.safe_text import printable
from agrag.flows.ingest_report import FileStatus, IngestReport, stage_lines
from agrag.pipelines.ontology_hint import hint_of

LABEL_WIDTH = 44


def one_line(text: str) -> str:
    r"""``text`` from data (a file name, title, folder or reason) as rich markup of one line.

    A newline in a file name would otherwise start a new line or table row that looks like agrag's own; it is shown
    as ``\u000a``, like every other control character.
    """
    return escape(printable(text, multiline=False))


def item_label(result: SearchResult) -> str:
    """A one-line label: an entity's name, the start of a chunk, a relation, a fact, a report's title, a query row."""
    item = result.item
    if isinstance(item, Entity):
        aliases = item.aliases if isinstance(item, ResolvedEntity) else ()
        return f"{item.name} (also {', '.join(aliases)})" if aliases else item.name
    if isinstance(item, Chunk):
        lines = item.text.splitlines()
        body = lines[1:] if len(lines) > 1 and lines[0].startswith("#") else lines  # the source column has headings
        return " ".join(" ".join(body).split())[: LABEL_WIDTH * 2]
    if isinstance(item, Relation):
        return item.description or f"{item.source_id} {item.type} {item.target_id}"
    if isinstance(item, Fact):
        return item.statement
    if isinstance(item, Community):
        return item.report.title if item.report else item.id
    return ", ".join(f"{c}={v}" for c, v in zip(item.columns, item.values, strict=True))


def item_source(result: SearchResult) -> str:
    """Where the item comes from: a chunk's heading path, an entity's label, a relation's type, a fact's passage."""
    item = result.item
    if isinstance(item, Chunk):
        return item.heading
    if isinstance(item, Entity):
        return item.label
    if isinstance(item, Relation):
        return item.type
    if isinstance(item, Fact):  # the passage to cite first
        return str(EvidenceId.of_chunk(item.passages[0])) if item.passages else ", ".join(item.chunk_ids)
    if isinstance(item, Community):
        return f"level {item.level}, {len(item.entity_ids)} entities"
    return "text2cypher row"


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
    """One row per method and per step after fusion: whether it ran, what it found, how long it took."""
    table = Table(
        title=f"trace: recipe {trace.recipe}, {trace.fused} fused, {trace.returned} returned, "
        f"{trace.elapsed_ms:.0f} ms",
        title_justify="left",
    )
    for column in ("method", "status", "results", "ms", "error"):
        table.add_column(column)
    for status in (*trace.methods, *trace.steps):
        table.add_row(
            status.method, "ok" if status.ok else "FAILED", str(status.count), f"{status.elapsed_ms:.1f}", status.error
        )
    return table


def analysis_line(trace: SearchTrace) -> str:
    """The query's analysis as one line under the trace table (empty when the search ran none)."""
    return f"query analysis: {trace.analysis.summary()}" if trace.analysis is not None else ""


def results_json(results: list[SearchResult], trace: SearchTrace | None) -> str:
    """Results (and the trace) as JSON.

    ``type`` names the item's class: ``ResolvedEntity`` for an entity that absorbed others, whose ``item`` then
    also holds ``merged_from`` (each merged entity's id, name, label, rule, score and reason).
    """
    rows: list[dict[str, Any]] = [
        {
            "rank": i,
            "method": r.method,
            "methods": list(r.methods),
            "score": r.score,
            "type": type(r.item).__name__,
            "item": asdict(r.item),
            **({"parent": asdict(r.parent)} if r.parent is not None else {}),
        }
        for i, r in enumerate(results, start=1)
    ]
    payload: dict[str, Any] = {"results": rows}
    if trace is not None:
        payload["trace"] = asdict(trace)
    return json.dumps(payload, indent=2, ensure_ascii=False)


def pruned_table(pruned: PrunedReport) -> Table:
    """The ``pruned`` report: what the ontology kept out of the graph, one example each."""
    table = Table(title="pruned (not in the ontology)", title_justify="left")
    for column in ("what", "type", "count", "example"):
        table.add_column(column)
    for label in pruned.dropped_labels:
        table.add_row("entity label", label.label, str(label.count), label.example)
    for pattern in pruned.undeclared_patterns:
        table.add_row(
            pattern.what,
            f"({pattern.source_label})-[{pattern.type}]->({pattern.target_label})",
            str(pattern.count),
            pattern.example,
        )
    if pruned.unknown_endpoints:
        table.add_row(
            "relation endpoint", "not an entity", str(pruned.unknown_endpoints), pruned.unknown_endpoint_example
        )
    return table


def print_keep_hint(console: Console, pruned: PrunedReport) -> None:
    """The command and the ``set_ontology`` call that would keep what the ontology pruned."""
    hint = hint_of(pruned)
    if hint is None:
        return
    if hint.command:
        console.print("To keep them in the next ingestion (or re-extraction), grow the ontology:", highlight=False)
        console.print(f"  {hint.command}", markup=False, highlight=False, soft_wrap=True)
        console.print("or call the set_ontology tool (or POST /v1/ontology) with:", highlight=False)
        console.print(f"  {hint.arguments}", markup=False, highlight=False, soft_wrap=True)
    if hint.reextract:
        console.print(
            f"then re-extract the {len(hint.documents)} documents they were dropped from "
            "(their chunks and evidence ids stay):",
            highlight=False,
        )
        console.print(f"  {hint.reextract}", markup=False, highlight=False, soft_wrap=True)
    if hint.skipped:
        console.print(f"Not in the hint (not valid names): {'; '.join(hint.skipped)}", markup=False, highlight=False)


def _print_run_notes(console: Console, report: IngestReport) -> None:
    """What was resumed from an interrupted run, and what the LLM was estimated to cost and did cost."""
    if report.other_settings:
        console.print(
            f"[yellow]{len(report.other_settings)} unchanged files were ingested with other settings[/yellow] "
            "(chunker, extractor, ontology or resolution) and were skipped; they keep what those settings made of "
            f"them (first: {one_line(report.other_settings[0])}). To rebuild everything with the new settings, "
            "ingest into a new AGRAG_DATA_DIR."
        )
    if report.communities_deferred:
        console.print("communities: deferred, run `agrag finalize` (ingest.finalize=manual)", markup=False)
    for replaced in (f for f in report.files if f.plan and f.reason):
        console.print(f"[yellow]plan[/yellow] {one_line(replaced.source_path)}: {one_line(replaced.reason)}")
    if report.documents_resumed:
        resumed = ", ".join(f"{phase} {count}" for phase, count in report.documents_resumed.items())
        console.print(f"Resumed an interrupted run: documents whose work was already done, by phase: {resumed}")
    if report.llm_estimate is not None:
        console.print(f"LLM extraction estimate: {report.llm_estimate.summary()}")
    if report.llm_calls or report.llm_cache_hits:
        console.print(f"LLM: {report.llm_calls} calls, {report.llm_cache_hits} answered from the cache")


def print_ingest_report(console: Console, report: IngestReport) -> None:
    """The summary printed at the end of ``agrag ingest``: counts and time per stage, pruned, failures, totals."""
    console.print(
        f"[bold]Ingested {one_line(report.folder)}[/bold]: {report.documents_seen} files read, "
        f"{report.documents_ingested} new or changed, {report.documents_unchanged} unchanged, "
        f"{len(report.failures)} failed."
    )
    if not report.documents_seen and not report.failures:
        console.print(f"[yellow]No supported documents were found under {one_line(report.folder)}.[/yellow]")
    counts = stage_lines(report)
    stages = Table(title="this run", title_justify="left")
    stages.add_column("stage")
    stages.add_column("result")
    stages.add_column("seconds", justify="right")
    for stage, seconds in report.stage_seconds.items():
        stages.add_row(stage, escape(counts.get(stage, "")), f"{seconds:.2f}")
    console.print(stages)
    _print_run_notes(console, report)
    if report.documents_ingested:
        if report.pruned.empty:
            console.print("pruned: nothing (every entity label and relation pattern is in the ontology)")
        else:
            console.print(pruned_table(report.pruned))
            print_keep_hint(console, report.pruned)
    totals = Table(title="store now holds", title_justify="left")
    totals.add_column("table")
    totals.add_column("rows", justify="right")
    for name, count in report.counts.items():
        totals.add_row(name, str(count))
    console.print(totals)
    for failure in report.failures:
        console.print(f"[red]failed[/red] {one_line(failure.source_path)}: {one_line(failure.reason)}")
    for empty in report.without_text:
        console.print(f"[yellow]warning[/yellow] {one_line(empty.source_path)}: {one_line(empty.reason)}")
    for chunk_failure in report.extraction_failures[:10]:
        console.print(f"[yellow]no entities[/yellow] {chunk_failure.chunk_id}: {one_line(chunk_failure.reason)}")


def file_status_table(files: tuple[FileStatus, ...]) -> Table:
    """Every file of the run with its status: ingested, unchanged, or failed and why."""
    table = Table(title="files", title_justify="left")
    for column in ("file", "status", "plan", "reason"):
        table.add_column(column)
    colours = {"ingested": "green", "unchanged": "dim", "failed": "red", "no text": "yellow"}
    for f in files:
        status = f"[{colours.get(f.status, 'white')}]{f.status}[/]"
        table.add_row(one_line(f.source_path), status, one_line(f.plan), one_line(f.reason))
    return table


def merge_log_table(entries: list[MergeLogEntry]) -> Table:
    """The merge log: which entity became which, by which rule, and why."""
    table = Table(title="merge log", title_justify="left")
    for column in ("log id", "decision", "entity", "into / apart from", "rule", "score", "reason"):
        table.add_column(column)
    for e in entries:
        decision = f"{e.decision} (undone)" if e.undone else e.decision
        table.add_row(
            e.id,
            decision,
            escape(f"{e.member_name} [{e.member_id}]"),
            escape(f"{e.resolved_name} [{e.resolved_id}]"),
            e.rule,
            f"{e.score:.2f}",
            escape(e.reason),
        )
    return table


def documents_table(documents: list[StoredDocument], title: str) -> Table:
    """The stored documents: id, title, path, the folder each came from, version and chunks."""
    table = Table(title=title, title_justify="left")
    widest = {"title": 30, "plan": 34}  # they wrap first, so the folder path keeps its end (the folder's own name)
    for column in ("id", "title", "path", "folder", "version", "chunks", "plan"):
        table.add_column(
            column, justify="right" if column == "chunks" else "left", overflow="fold", max_width=widest.get(column)
        )
    for d in documents:
        folder = d.source_folder or "(not recorded)"
        plan = d.plan.summary() if d.plan is not None else "(not recorded)"
        table.add_row(
            d.id, one_line(d.title), one_line(d.source_path), one_line(folder), d.version, str(d.chunks), plan
        )
    return table


def candidates_table(candidates: list[ResolutionCandidate]) -> Table:
    """Near misses of entity resolution, kept out of the graph."""
    table = Table(title="near-miss candidates (not merged)", title_justify="left")
    for column in ("entity", "other", "rule", "score"):
        table.add_column(column)
    for c in candidates:
        table.add_row(
            f"{escape(c.name)} [{c.entity_id}]", f"{escape(c.other_name)} [{c.other_id}]", c.rule, f"{c.score:.2f}"
        )
    return table
