"""Text ingest: a text handed to agrag under a name becomes (a new version of) one document.

Every surface runs the same steps (``text_targets``): ``prepare_text`` checks the name and the text, refuses a name
that leads to a document read from a file, and keeps the text in the data dir's texts folder; then an ingestion of
that one file runs (here in this process; in ``agrag serve`` as a run of its queue), and ``text_result`` reads what
it did. An unchanged text is ``unchanged``; a changed one is a new version of the same document, whose old chunks
are superseded while evidence ids of the old version keep fetching its text.
"""

from __future__ import annotations

from collections.abc import Sequence

from agrag.flows.ingest_flow import ingest_into
from agrag.flows.ingest_report import FAILED
from agrag.flows.text_targets import TextIngestResult, prepare_text, result_of
from agrag.pipelines.runtime import Runtime


def ingest_text(
    runtime: Runtime, text: str, document_id: str, title: str | None = None, overrides: Sequence[str] = ()
) -> TextIngestResult:
    r"""Ingest ``text`` as the document named ``document_id``, in this process, with ``runtime``'s stores.

    Args:
        runtime: An open data dir (``open_runtime(require_data=False)`` for an empty one).
        text: The document's text (Markdown, or plain text for a name ending in .txt).
        document_id: The caller's name for it, e.g. 'meeting-2026-11-30' or 'notes.md' (see
            ``text_documents.NAME_RULE``), or the id of a stored text's document.
        title: The document's title; by default its first heading, else the name.
        overrides: Hydra overrides of the ingestion (``ingest.*``).

    Raises:
        TextIngestError: a bad name, text or title, or a name that leads to a file's document (``TextOverFileError``).
        AgragError: the ingestion could not run (a missing LLM the configuration needs, a store error).

    Usage:
        ```python
        with open_runtime([], require_data=False) as runtime:
            result = ingest_text(runtime, "# Kickoff\n\nAda leads Orion.", "meeting-2026-11-30")
            result.status, result.document_id   # ('ingested', 'd3f...')
        ```
    """
    target = prepare_text(runtime, text, document_id, title)
    report = ingest_into(
        str(target.folder),
        runtime.config_for(overrides),
        runtime.store,
        runtime.ingest_embedder(),
        llm=runtime.llm,
        files_root=runtime.settings.agrag.files_root,
        files=[target.file_name],
    )
    status = next((f for f in report.files if f.source_path == target.file_name), None)
    if status is None:
        return result_of(runtime.store, target, FAILED, "the ingestion did not read the text's file")
    return result_of(runtime.store, target, status.status, status.reason)
