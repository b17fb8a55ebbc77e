"""Each file's line in the ingest report: its status, the plan it got, and why anything was replaced or refused."""

from __future__ import annotations

from dataclasses import replace

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.loaders.file_failure import FileFailure
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows.ingest_report import FAILED, INGESTED, NO_TEXT, NO_TEXT_REASON, UNCHANGED, FileStatus, IngestReport
from agrag.pipelines.ingest_plans import FilePlan


def file_statuses(
    documents: list[LoadedDocument], changed: list[LoadedDocument], failures: list[FileFailure]
) -> tuple[FileStatus, ...]:
    """Every file's status after select-changed: ingested, unchanged or failed (to load), in path order."""
    changed_paths = {d.document.source_path for d in changed}
    statuses = [
        FileStatus(d.document.source_path, INGESTED if d.document.source_path in changed_paths else UNCHANGED)
        for d in documents
    ]
    statuses += [FileStatus(f.source_path, FAILED, f.reason) for f in failures]
    return tuple(sorted(statuses, key=lambda s: s.source_path))


def with_plans(
    report: IngestReport, changed: list[LoadedDocument], plans: dict[str, FilePlan], refused: dict[str, str]
) -> IngestReport:
    """The report with each changed file's plan and reasons, and the files the per-file limits refused as failed.

    Args:
        report: The report so far.
        changed: The changed documents (those refused included).
        plans: The plan of each document that goes on, by document id.
        refused: Why each refused document was refused, by document id.
    """
    paths = {d.document.id: d.document.source_path for d in changed}
    refused_paths = {paths[doc_id]: reason for doc_id, reason in refused.items()}
    planned = {paths[doc_id]: plan for doc_id, plan in plans.items()}
    files = []
    for f in report.files:
        if f.source_path in refused_paths:
            files.append(replace(f, status=FAILED, reason=refused_paths[f.source_path]))
        elif (plan := planned.get(f.source_path)) is not None:
            files.append(replace(f, plan=plan.applied.summary(), reason="; ".join(plan.applied.reasons)))
        else:
            files.append(f)
    failed = tuple(FileFailure(path, reason) for path, reason in sorted(refused_paths.items()))
    return replace(
        report,
        files=tuple(files),
        failures=(*report.failures, *failed),
        documents_ingested=report.documents_ingested - len(failed),
    )


def without_text(
    files: tuple[FileStatus, ...], changed: list[LoadedDocument], chunks: list[Chunk]
) -> tuple[FileStatus, ...]:
    """Mark the changed files that gave no searchable chunk (a file of headings only) with the warning ``no text``."""
    searchable = {c.document_id for c in chunks if c.searchable}
    empty = {d.document.source_path for d in changed if d.document.id not in searchable}
    return tuple(replace(f, status=NO_TEXT, reason=NO_TEXT_REASON) if f.source_path in empty else f for f in files)


def other_settings(
    documents: list[LoadedDocument], changed: list[LoadedDocument], store: KnowledgeStore, current: dict[str, str]
) -> tuple[str, ...]:
    """The unchanged files ingested with other settings than their plan's (chunker, extractor, ontology, resolution).

    ``current`` is the settings hash each document's plan gives now, by document id.
    """
    changed_ids = {d.document.id for d in changed}
    unchanged = [d.document for d in documents if d.document.id not in changed_ids]
    recorded = store.graph.document_config_hashes([d.id for d in unchanged])
    return tuple(sorted(d.source_path for d in unchanged if recorded.get(d.id, "") not in ("", current[d.id])))
