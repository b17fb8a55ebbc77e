"""The write tools: ``ingest`` (a text under a document name, or files of the files root) and ``delete_document``.

They run as ingestion runs of the data dir's one queue (the same runs ``agrag serve`` queues for the HTTP API and
the Prefect UI), and wait for the run to finish, so what a client ingests is searchable by its next call. They are
offered only by a host that has a queue (``WriteHost``), and an MCP server lists them only with ``--allow-write``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.ingestion_run import IngestionRun, RunSource, RunState
from agrag.components.errors import DocumentNotFoundError, IngestError
from agrag.components.loaders.file_selection import MAX_FILES, select_files
from agrag.components.loaders.files_root import TEXTS_FOLDER, folder_key
from agrag.components.loaders.text_documents import MAX_TEXT_CHARS, MAX_TITLE_CHARS, NAME_PATTERN
from agrag.flows.text_targets import prepare_text, text_result
from agrag.service.tools.errors import ReadOnlyToolError, ScopedWriteError, UnknownDocumentToDeleteError
from agrag.service.tools.tool import Tool, ToolContext, ToolHost, ToolInput

if TYPE_CHECKING:  # as the other tools: the definitions load without Haystack or FastAPI
    from agrag.pipelines.runtime import Runtime
    from agrag.service.api.dependencies import RunQueue

MAX_PATTERN_CHARS = 1000
RUN_TIMEOUT_SECONDS = 1800.0
POLL_SECONDS = 0.2
DOCUMENT_NAME = NAME_PATTERN


class WriteHost(ToolHost):
    """A ``ToolHost`` that can also write: it holds the data dir's ingestion queue."""

    def __init__(self, runtime: Runtime, queue: RunQueue, clock: Callable[[], float] = time.monotonic) -> None:
        """Serve ``runtime``, writing through ``queue`` (its last finished run is the status's last ingestion)."""
        super().__init__(runtime, queue.last_finished)
        self.queue = queue
        self._clock = clock

    def texts_folder(self) -> Path:
        """The folder ingested texts are kept in (inside the data dir, one file per document name)."""
        folder = self.runtime.data_dir / TEXTS_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def wait(self, run: IngestionRun, timeout: float = RUN_TIMEOUT_SECONDS) -> IngestionRun:
        """``run`` once it is final.

        Raises:
            IngestError: it is not final after ``timeout`` seconds (it goes on; its id is in the message).
        """
        deadline = self._clock() + timeout
        while not run.state.final:
            if self._clock() > deadline:
                raise IngestError(f"Run {run.id} is still {run.state} after {timeout:.0f} s; it goes on. Call status.")
            time.sleep(POLL_SECONDS)
            run = self.queue.get(run.id)
        return run


class IngestInput(ToolInput):
    """The arguments of ``ingest``: a text with its document name, or files of the files root."""

    text: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_TEXT_CHARS,
        description="The document's text (Markdown); give `document` with it, and leave out `files`.",
    )
    document: str | None = Field(
        None,
        pattern=DOCUMENT_NAME,
        description="The text's document name, e.g. 'meeting-2026-11-30' or 'notes.md' (letters, digits, spaces, "
        "'_', '-', '.'; kept as Markdown unless it ends in .txt). The same name again stores a new version of that "
        "document (its old evidence ids keep naming the old version); an unchanged text is left as it is. A name "
        "that leads to a document read from a file is refused.",
    )
    title: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_TITLE_CHARS,
        description="The text's title; by default its first heading, else the name. Only with `text`.",
    )
    files: list[Annotated[str, Field(min_length=1, max_length=MAX_PATTERN_CHARS)]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_FILES,
        description=f"Instead of a text: files of the server's files root, as paths or globs relative to it (e.g. "
        f"['reports/q3.md', 'notes/**/*.md']); at most {MAX_FILES} paths or globs, matching at most the server's "
        "AGRAG_MAX_FILES_PER_CALL files (50 by default). A file changed since it was last "
        "ingested gets a new version; an unchanged one is skipped.",
    )

    @model_validator(mode="after")
    def _one_mode(self) -> IngestInput:
        if self.files is not None and (self.text is not None or self.document is not None or self.title is not None):
            raise ValueError("give either `files`, or `text` with `document` (and `title`), not both")
        if self.files is None and (self.text is None or self.document is None):
            raise ValueError("give `text` with `document` (a text), or `files` (paths or globs under the files root)")
        return self


class DeleteDocumentInput(ToolInput):
    """The arguments of ``delete_document``."""

    document_id: str = Field(..., min_length=2, max_length=100, description="The id (from list_documents).")


class WrittenFile(BaseModel):
    """One file of an ingestion of files, and what the run did with it."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(..., description="The file, relative to the files root.")
    document_id: str = Field(..., description="Its document id (from the path, so stable across versions).")
    status: str = Field(..., description="ingested, unchanged, no text (stored, nothing to search) or failed.")
    reason: str = Field("", description="Why it failed (or the warning).")


class WriteResult(BaseModel):
    """The outcome of a write: the document (or files) and the finished run."""

    model_config = ConfigDict(frozen=True)

    document_id: str = Field(..., description="The document written or deleted; '' for an ingestion of files.")
    run_id: str = Field(..., description="The ingestion run that did it.")
    state: RunState = Field(..., description="completed, completed_with_failures, failed, cancelled or interrupted.")
    message: str = Field("", description="What the run said.")
    error: str = Field("", description="Why it failed, if it did.")
    files: tuple[WrittenFile, ...] = Field((), description="For an ingestion of files: each file and its outcome.")
    status: str = Field("", description="For a text: ingested, unchanged, no text or failed ('' otherwise).")


def writer(context: ToolContext, tool: str) -> WriteHost:
    """The call's host, as a ``WriteHost``.

    Raises:
        ReadOnlyToolError: the host cannot write (a server started without ``--allow-write``).
        ScopedWriteError: the caller is limited to some documents.
    """
    host = context.host
    if not isinstance(host, WriteHost):
        raise ReadOnlyToolError(tool)
    if context.scope.document_ids is not None:
        raise ScopedWriteError(tool)
    return host


def _result(document_id: str, run: IngestionRun) -> WriteResult:
    return WriteResult(document_id=document_id, run_id=run.id, state=run.state, message=run.message, error=run.error)


def _ingest(context: ToolContext, arguments: IngestInput) -> WriteResult:
    host = writer(context, "ingest")
    files_root = host.runtime.settings.agrag.files_root
    if arguments.files is not None:
        return _ingest_files(host, arguments.files, files_root)
    assert arguments.text is not None and arguments.document is not None  # the input model checked both are given
    target = prepare_text(host.runtime, arguments.text, arguments.document, arguments.title)
    run = host.wait(host.queue.submit_ingest(str(target.folder), (), RunSource.CLI, (target.file_name,)))
    done = text_result(host.runtime.store, target, run)
    return WriteResult(
        document_id=target.document_id,
        run_id=run.id,
        state=run.state,
        message=run.message,
        error=run.error,
        status=done.status,
    )


def _ingest_files(host: WriteHost, patterns: list[str], files_root: Path | None) -> WriteResult:
    """Ingest the files ``patterns`` choose below the files root, as one run of their common folder."""
    suffixes = host.runtime.config.ingest.loader.suffixes
    selection = select_files(patterns, files_root, suffixes, host.runtime.settings.agrag.max_files_per_call)
    assert files_root is not None  # select_files refuses a missing files root
    run = host.wait(host.queue.submit_ingest(str(selection.folder), (), RunSource.CLI, selection.files))
    key, root = folder_key(selection.folder, files_root), files_root.expanduser().resolve()
    statuses = {f["source_path"]: f for f in _reported_files(run)}
    written = []
    for rel in selection.files:
        status = statuses.get(rel, {"status": "failed", "reason": run.error or run.message})
        written.append(
            WrittenFile(
                path=(selection.folder / rel).relative_to(root).as_posix(),
                document_id=document_id_for(rel, key),
                status=str(status.get("status", "")),
                reason=str(status.get("reason", "")),
            )
        )
    return WriteResult(
        document_id="",
        run_id=run.id,
        state=run.state,
        message=run.message,
        error=run.error,
        files=tuple(written),
    )


def _reported_files(run: IngestionRun) -> list[dict[str, Any]]:
    """The per-file statuses of a finished ingestion's report (none if it ended before loading)."""
    files = (run.report or {}).get("files", [])
    return [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []


def _delete(context: ToolContext, arguments: DeleteDocumentInput) -> WriteResult:
    host = writer(context, "delete_document")
    try:  # an unknown id is the caller's mistake: refused here, not a run queued only to fail
        host.runtime.require_document(arguments.document_id)
    except DocumentNotFoundError as exc:
        raise UnknownDocumentToDeleteError(arguments.document_id) from exc
    run = host.wait(host.queue.submit_delete(arguments.document_id, (), RunSource.CLI))
    return _result(arguments.document_id, run)


INGEST: Tool[IngestInput, WriteResult] = Tool(
    name="ingest",
    title="Add a text to the graph",
    description=(
        "Store a text as a document of the knowledge graph under a name (e.g. 'notes.md'), or ingest files of the "
        "server's files root by paths or globs (at most AGRAG_MAX_FILES_PER_CALL files a call, 50 by default): "
        "each is cut into passages, embedded, its entities and relations extracted, and once this call returns it "
        "is searchable by search_evidence. The same name (or a changed file) again stores a new version. Ask the "
        "user before calling it: it writes to the data dir. Returns the document id (or each file with its id and "
        "outcome) and the run's outcome. Cost: seconds for a page of text (longer when the server extracts with an "
        "LLM); runs wait for the ingestion before them."
    ),
    input_model=IngestInput,
    output_type=WriteResult,
    handler=_ingest,
    writes=True,
)
DELETE_DOCUMENT: Tool[DeleteDocumentInput, WriteResult] = Tool(
    name="delete_document",
    title="Delete a document",
    description=(
        "Remove a document (by the id list_documents gives) from the graph: its passages, and the entities and "
        "relations only it stated. Ask the user before calling it: it cannot be undone except by ingesting the "
        "document again. Cost: about a second; runs wait for the ingestion before them."
    ),
    input_model=DeleteDocumentInput,
    output_type=WriteResult,
    handler=_delete,
    writes=True,
)
