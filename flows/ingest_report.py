"""``IngestReport``: what one ingestion run did."""

from __future__ import annotations

from dataclasses import dataclass, field

from agrag.components.data_models.extraction import ChunkFailure
from agrag.components.data_models.llm_estimate import LLMEstimate
from agrag.components.data_models.ontology import PrunedReport
from agrag.components.loaders.file_failure import FileFailure
from agrag.components.stores.vector_store import VectorCollection

INGESTED = "ingested"
UNCHANGED = "unchanged"
FAILED = "failed"
NO_TEXT = "no text"  # a warning: the version was stored, but has nothing to search (only headings, say)
NO_TEXT_REASON = "nothing to search: the file has no text outside its headings (0 chunks)"


@dataclass(frozen=True, slots=True)
class FileStatus:
    """What happened to one file: ``ingested``, ``unchanged``, ``no text`` (a warning) or ``failed`` (with why).

    ``plan`` says which plan an ingested file got (``rule 2 (*.csv): fixed chunker, lexical extractor``); the reason
    then says why a choice of its rule was replaced, if one was.
    """

    source_path: str
    status: str
    reason: str = ""
    plan: str = ""


@dataclass(frozen=True, slots=True)
class IngestReport:
    """Counts per stage, the status of every file, what the ontology pruned, time per stage, and store counts.

    Attributes:
        folder: The folder ingested.
        documents_seen: Files loaded without error.
        documents_ingested: New or changed document versions written.
        documents_unchanged: Files whose current version was already stored (skipped).
        failures: Files that could not be loaded, with the reason.
        files: Every file's status, in path order.
        other_settings: Unchanged files that were ingested with other settings than this run's (they were skipped,
            and keep what those settings made of them).
        chunks_written: Chunks of the versions written (all kinds).
        chunks_by_kind: Of those, how many text, table and section (parent) chunks.
        chunks_superseded: Chunks of older versions marked superseded.
        extraction_failures: Chunks the LLM extractor could not read (the rest of the run went on).
        entities_found: Distinct entities kept after pruning, in the versions written.
        entities_new: Of those, entities the store did not know yet.
        entities_removed: Entities only superseded text supported, now out of the current graph.
        relations_found: Distinct relations kept after pruning.
        pruned: What the ontology dropped.
        merges: Entities merged into another by resolution in this run.
        kept_apart: Look-alike entities resolution kept apart (homonyms), logged with the reason.
        candidates: Near misses kept out of the graph for review.
        communities_by_level: Communities per hierarchy level after the run.
        reports_by_method: Community reports by method (llm, extractive).
        reports_reused: Reports kept from before because their community did not change.
        report_fallbacks: LLM reports that failed and were written extractively instead.
        embedded_on: Where the chunks were embedded when not in the ingesting process ("2 local Dask workers").
        documents_resumed: Per phase (chunk, extract, resolve, embed), the documents whose work an interrupted run
            had finished and this run read back from the phase journal instead of redoing.
        llm_estimate: What LLM extraction was estimated to send before it started (None without LLM extraction).
        llm_calls: Calls sent to the LLM in this run (extraction, resolution and reports).
        llm_cache_hits: Requests answered from the LLM answer cache instead.
        communities_deferred: The graph changed but communities and reports were left stale
            (``ingest.finalize=manual``): ``agrag finalize`` rebuilds them.
        vectors_indexed: Points of each vector collection the ``index`` stage indexed for search (empty: none was due).
        stage_seconds: Wall time of each stage.
        counts: Rows per graph table and points per vector collection after the run.
    """

    folder: str
    documents_seen: int
    documents_ingested: int
    documents_unchanged: int
    failures: tuple[FileFailure, ...]
    files: tuple[FileStatus, ...] = ()
    other_settings: tuple[str, ...] = ()
    chunks_written: int = 0
    chunks_by_kind: dict[str, int] = field(default_factory=dict)
    chunks_superseded: int = 0
    extraction_failures: tuple[ChunkFailure, ...] = ()
    entities_found: int = 0
    entities_new: int = 0
    entities_removed: int = 0
    relations_found: int = 0
    pruned: PrunedReport = field(default_factory=PrunedReport)
    merges: int = 0
    kept_apart: int = 0
    candidates: int = 0
    communities_by_level: dict[int, int] = field(default_factory=dict)
    reports_by_method: dict[str, int] = field(default_factory=dict)
    reports_reused: int = 0
    report_fallbacks: int = 0
    embedded_on: str = ""
    documents_resumed: dict[str, int] = field(default_factory=dict)
    llm_estimate: LLMEstimate | None = None
    llm_calls: int = 0
    llm_cache_hits: int = 0
    communities_deferred: bool = False
    vectors_indexed: dict[str, int] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """Total time of the stages."""
        return sum(self.stage_seconds.values())

    @property
    def without_text(self) -> tuple[FileStatus, ...]:
        """The files stored with nothing to search (status ``no text``): a warning."""
        return tuple(f for f in self.files if f.status == NO_TEXT)


def stage_lines(report: IngestReport, *, final: bool = True) -> dict[str, str]:
    """What each stage produced, in words, keyed by stage name: the CLI's stage table and each stage's run line.

    With ``final`` False (the line of a stage that has just ended, before the write), the chunk line leaves out how
    many chunks of older versions were superseded, which only the write stage knows.
    """
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(report.chunks_by_kind.items()))
    pruned = report.pruned
    levels = ", ".join(f"level {level}: {n}" for level, n in report.communities_by_level.items())
    reports = ", ".join(f"{n} {method}" for method, n in sorted(report.reports_by_method.items()))
    extract_failed = f", {len(report.extraction_failures)} chunks failed" if report.extraction_failures else ""
    superseded = f", {report.chunks_superseded} superseded" if final else ""
    return {
        "load": f"{report.documents_seen} files read, {len(report.failures)} failed",
        "select-changed": f"{report.documents_ingested} new or changed, {report.documents_unchanged} unchanged",
        "chunk": f"{report.chunks_written} chunks ({kinds}){superseded}" if kinds else "",
        "extract": f"{pruned.entities_kept + pruned.entities_dropped} entities, "
        f"{pruned.relations_kept + pruned.relations_dropped} relations{extract_failed}",
        "prune": f"kept {pruned.entities_kept} entities and {pruned.relations_kept} relations"
        + (f" ({pruned.relations_generalised} as RELATED_TO)" if pruned.relations_generalised else "")
        + f"; dropped {pruned.entities_dropped} and {pruned.relations_dropped}",
        "resolve": f"{report.entities_found} entities ({report.entities_new} new), {report.merges} merged, "
        f"{report.kept_apart} kept apart, {report.candidates} near-miss candidates",
        "embed": f"{report.chunks_written - report.chunks_by_kind.get('section', 0)} chunks, "
        f"{report.entities_new} entities" + (f" on {report.embedded_on}" if report.embedded_on else ""),
        "write": f"{report.relations_found} relations, {report.entities_removed} entities only old text supported "
        "removed",
        "communities": levels or "none",
        "reports": f"{reports or 'none'} ({report.reports_reused} reused"
        + (f", {report.report_fallbacks} LLM fallbacks)" if report.report_fallbacks else ")"),
        "index": index_line(report.vectors_indexed),
    }


_POINTS = {
    VectorCollection.CHUNKS: "chunk",
    VectorCollection.ENTITIES: "entity",
    VectorCollection.COMMUNITIES: "report",
    VectorCollection.FACTS: "fact",
}


def index_line(indexed: dict[str, int]) -> str:
    """The stage's line: which collections were indexed, with their points ("1000 chunk, 600 entity vectors ...")."""
    if not indexed:
        return "nothing was due"
    counts = ", ".join(f"{points} {_POINTS[VectorCollection(name)]}" for name, points in indexed.items())
    return f"{counts} vectors indexed for search"
