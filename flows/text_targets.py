"""Preparing a text for ingestion, and reading what the run that ingested it did (no Prefect, no Haystack here).

``prepare_text`` checks the name and the text, refuses a name that leads to a document read from a file, and keeps
the text in the data dir's texts folder; an ingestion of that one file then runs (``text_ingest.ingest_text`` in this
process, or a run of ``agrag serve``'s queue), and ``text_result`` reads what it did. The tool definitions and the
HTTP routes import this module, so it loads without the ingestion flow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agrag.components.data_models.ingestion_run import IngestionRun
from agrag.components.loaders.files_root import TEXTS_FOLDER
from agrag.components.loaders.text_documents import TextTarget, keep_text, text_target, titled_text

if TYPE_CHECKING:
    from agrag.components.stores.knowledge_store import KnowledgeStore
    from agrag.pipelines.runtime import Runtime

FAILED = "failed"  # as flows/ingest_report.py names it (that module loads the extraction models)


class TextIngestResult(BaseModel):
    """What ingesting one text did."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(..., description="The text's name, as given (e.g. 'meeting-2026-11-30').")
    document_id: str = Field(..., description="Its document id (search filters, evidence ids and delete use it).")
    status: str = Field(
        ..., description="ingested (new or a new version), unchanged, no text (stored, nothing to search) or failed."
    )
    version: str = Field("", description="The document's current version after the ingestion ('' if none).")
    title: str = Field("", description="The document's title: the title given, else its first heading, else the name.")
    file: str = Field(..., description="Where the text is kept, relative to the data dir.")
    reason: str = Field("", description="Why it failed (or the warning).")
    run_id: str = Field("", description="The ingestion run that did it ('' when it ran in this process).")


def prepare_text(runtime: Runtime, text: str, name: str, title: str | None = None) -> TextTarget:
    """Check ``name``, ``text`` and ``title``, then keep the text in the texts folder; the file and document it is.

    Raises:
        BadTextNameError: the name breaks the naming rule.
        BadTextError: the text is empty or too long, or the title is not one short line.
        TextOverFileError: the name leads to a document read from a file (nothing is written).
    """
    store = runtime.store
    with store.reading():
        target = text_target(name, runtime.data_dir, runtime.settings.agrag.files_root, store.graph)
    keep_text(target, titled_text(text, target.file_name, title))
    return target


def text_result(store: KnowledgeStore, target: TextTarget, run: IngestionRun) -> TextIngestResult:
    """What the finished queued ``run`` of ``target``'s file did to the text."""
    files = (run.report or {}).get("files", [])
    reported: dict[str, Any] = (
        next((f for f in files if isinstance(f, dict) and f.get("source_path") == target.file_name), {})
        if isinstance(files, list)
        else {}
    )
    status = str(reported.get("status") or FAILED)
    reason = str(reported.get("reason") or ("" if reported else run.error or run.message))
    return result_of(store, target, status, reason, run.id)


def result_of(
    store: KnowledgeStore, target: TextTarget, status: str, reason: str, run_id: str = ""
) -> TextIngestResult:
    """The result for ``target`` with the run's ``status``: the document's version and title as now committed."""
    with store.reading():
        stored = store.graph.stored_documents([target.document_id]).get(target.document_id)
    return TextIngestResult(
        name=target.name,
        document_id=target.document_id,
        status=status,
        version=stored.version if stored is not None else "",
        title=stored.title if stored is not None else "",
        file=f"{TEXTS_FOLDER}/{target.file_name}",
        reason=reason,
        run_id=run_id,
    )
