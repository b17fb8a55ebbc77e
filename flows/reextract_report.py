"""What a re-extraction did: a status per document, what left the graph, the communities, the LLM calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class ReextractStatus(StrEnum):
    """How re-extraction ended for one document."""

    REEXTRACTED = "reextracted"  # its entities, mentions and relations were replaced under the current settings
    UNCHANGED = "unchanged"  # it was extracted under the current settings already (``--force`` redoes it)
    FAILED = "failed"  # nothing of it changed; ``reason`` says why


@dataclass(frozen=True, slots=True)
class DocumentOutcome:
    """One document's re-extraction.

    Attributes:
        document_id: The document.
        status: How it ended.
        reason: Why it failed, or a note (for example that it resumed an interrupted run).
        chunks: Its current chunks, read from the graph (their ids and evidence ids stay).
        entities: Entities its chunks now name (after pruning and resolution).
        relations: Relations its chunks now support.
        relations_pruned: Relations the ontology in force dropped.
        entities_new: Entities that were not in the graph before (the only ones embedded).
        entities_removed: Entities no document names any more, removed with it.
        resumed: Its replacement was finished by this run after an interrupted one had begun it.
    """

    document_id: str
    status: ReextractStatus
    reason: str = ""
    chunks: int = 0
    entities: int = 0
    relations: int = 0
    relations_pruned: int = 0
    entities_new: int = 0
    entities_removed: int = 0
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class ReextractReport:
    """What ``run_reextract`` did.

    Attributes:
        documents: One outcome per document asked for (or found under other settings), in the order done.
        config_hash: The settings hash the re-extracted documents now carry.
        communities_by_level: Communities after the refresh (empty when they were not refreshed).
        llm_calls: Requests sent to the LLM (cached answers are not counted).
        llm_cache_hits: Answers read from the data dir's LLM cache.
        counts: Rows per graph table and points per vector collection at the end.
        notes: Facts a user should know about how the run was set up (the plan or ontology used).
    """

    documents: tuple[DocumentOutcome, ...] = ()
    config_hash: str = ""
    communities_by_level: dict[int, int] = field(default_factory=dict)
    llm_calls: int = 0
    llm_cache_hits: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def with_status(self, status: ReextractStatus) -> list[DocumentOutcome]:
        """The outcomes with this status."""
        return [d for d in self.documents if d.status == status]

    @property
    def entities_removed(self) -> int:
        """Entities removed because no document names them any more."""
        return sum(d.entities_removed for d in self.documents)


def reextract_summary(report: ReextractReport) -> str:
    """The counts in one sentence: the CLI's last line and the message of the run's final state."""
    counts = ", ".join(f"{len(report.with_status(s))} {s.value}" for s in ReextractStatus)
    if not report.documents:
        return "Nothing to re-extract: no document was ingested under other settings."
    removed = (
        f"; {report.entities_removed} entities no document names any more removed" if report.entities_removed else ""
    )
    return f"Re-extraction: {counts}{removed}."


def outcome_line(outcome: DocumentOutcome) -> str:
    """One document's line: its id, its status, and what changed or why it failed."""
    if outcome.status == ReextractStatus.FAILED:
        return f"{outcome.document_id}: failed: {outcome.reason}"
    if outcome.status == ReextractStatus.UNCHANGED:
        return (
            f"{outcome.document_id}: unchanged ({outcome.reason})"
            if outcome.reason
            else f"{outcome.document_id}: unchanged"
        )
    resumed = " (finished after an interrupted run)" if outcome.resumed else ""
    return (
        f"{outcome.document_id}: reextracted{resumed}: {outcome.chunks} chunks, {outcome.entities} entities "
        f"({outcome.entities_new} new, {outcome.entities_removed} removed), {outcome.relations} relations "
        f"({outcome.relations_pruned} pruned)"
    )


def report_lines(report: ReextractReport) -> list[str]:
    """What the CLI prints: a line per document, then the counts."""
    return [*(outcome_line(d) for d in report.documents), reextract_summary(report), *report.notes]
