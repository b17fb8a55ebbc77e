"""The routes of text ingest (``POST /v1/texts``) and of the files preview (``POST /v1/files/preview``).

Both need a token that may read every document, as ingestion does: a text may become any document's new version,
and a preview reads files of the files root, not the graph.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from agrag.components.data_models.ingestion_run import RunSource
from agrag.components.loaders.file_preview import PreviewPage
from agrag.components.loaders.text_documents import MAX_NAME_CHARS, MAX_TEXT_CHARS, MAX_TITLE_CHARS
from agrag.flows.text_targets import TextIngestResult, prepare_text, text_result
from agrag.pipelines.ingest_components import check_llm_needs
from agrag.service.api.dependencies import AdminCaller, Queue, State
from agrag.service.api.errors import ERROR_RESPONSES
from agrag.service.tools.preview_tool import PREVIEW_FILES, PreviewFilesInput
from agrag.service.tools.tool import ToolContext
from agrag.service.tools.write_tools import WriteHost

MAX_OVERRIDES = 50
ClientSource = Literal[RunSource.HTTP, RunSource.CLI]


class TextRequest(BaseModel):
    """The body of ``POST /v1/texts``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(
        ...,
        max_length=MAX_TEXT_CHARS,
        description="The document's text (Markdown, or plain text for a name ending in .txt).",
    )
    document_id: str = Field(
        ...,
        max_length=MAX_NAME_CHARS + 20,
        description="The text's name, e.g. 'meeting-2026-11-30' or 'notes.md' (letters, digits, spaces, '_', '-', "
        "'.'), or the id of a stored text's document. The same name again stores a new version; a name that leads to "
        "a document read from a file is refused.",
    )
    title: str | None = Field(
        None, max_length=MAX_TITLE_CHARS, description="Its title; by default its first heading, else the name."
    )
    overrides: tuple[str, ...] = Field(
        (),
        max_length=MAX_OVERRIDES,
        description="Hydra overrides of the ingestion, e.g. ['ingest.chunker.max_chars=800'].",
    )
    source: ClientSource = Field(
        RunSource.HTTP, description="Who asks: `cli` when the agrag CLI sends its command to the server."
    )


def text_routes() -> APIRouter:
    """The routes of text ingest and of the files preview."""
    router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)

    @router.post("/texts", tags=["ingestion"], summary="Ingest a text under a name")
    def ingest_text(state: State, caller: AdminCaller, queue: Queue, request: TextRequest) -> TextIngestResult:
        """Store a text as a document (a new version if its text changed) and answer once it is searchable.

        The text is kept in the data dir's texts folder and ingested by a run of the queue (after any run before
        it); the answer says `ingested`, `unchanged`, `no text` or `failed`, with the document id and the run id.
        A bad name or a name that leads to a document read from a file is refused before anything is written.
        """
        host = WriteHost(state.host.runtime, queue)
        check_llm_needs(state.host.config(request.overrides).ingest, host.runtime.llm)
        target = prepare_text(host.runtime, request.text, request.document_id, request.title)
        run = queue.submit_ingest(str(target.folder), request.overrides, request.source, (target.file_name,))
        return text_result(host.runtime.store, target, host.wait(run))

    @router.post("/files/preview", tags=["ingestion"], summary="Preview files of the files root")
    def preview(state: State, caller: AdminCaller, request: PreviewFilesInput) -> PreviewPage:
        """A sample from the middle of each matched file of the files root, a page of files at a time."""
        return PREVIEW_FILES.run(ToolContext(state.host, caller.scope), request)

    return router
