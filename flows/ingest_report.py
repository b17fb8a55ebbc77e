"""``IngestReport``: what one ingestion run did."""

from __future__ import annotations

from dataclasses import dataclass, field

from agrag.components.loaders.text_file_loader import FileFailure


@dataclass(frozen=True, slots=True)
class IngestReport:
    """Counts per stage, failed files, time per stage, and the store counts after the run.

    Attributes:
        folder: The folder ingested.
        documents_seen: Files loaded without error.
        documents_ingested: New or changed document versions written.
        documents_unchanged: Files whose current version was already stored (skipped).
        failures: Files that could not be loaded, with the reason.
        chunks_written: Chunks of the versions written.
        chunks_superseded: Chunks of older versions marked superseded.
        entities_found: Distinct entities in the versions written.
        entities_new: Of those, entities the store did not know yet.
        relations_found: Distinct relations in the versions written.
        stage_seconds: Wall time of each stage.
        counts: Rows per graph table and points per vector collection after the run.
    """

    folder: str
    documents_seen: int
    documents_ingested: int
    documents_unchanged: int
    failures: tuple[FileFailure, ...]
    chunks_written: int = 0
    chunks_superseded: int = 0
    entities_found: int = 0
    entities_new: int = 0
    relations_found: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """Total time of the stages."""
        return sum(self.stage_seconds.values())
