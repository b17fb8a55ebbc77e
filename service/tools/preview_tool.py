"""The ``preview_files`` tool: a bounded sample from the middle of files of the files root, a page at a time.

It reads files, not the graph, so only a caller that may read every document may call it (a token limited to some
documents could otherwise read any file's text). Over MCP it is offered with the write tools (``--allow-write``):
like ``ingest`` of files it reads the files root, which a read-only server keeps its clients away from.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from agrag.components.data_models.paging import MAX_OFFSET
from agrag.components.loaders.file_preview import MAX_CHARS, MAX_LIMIT, MIN_CHARS, PreviewPage, preview_files
from agrag.components.text_preview_errors import ScopedPreviewError
from agrag.service.tools.tool import Tool, ToolContext, ToolInput

MAX_PATTERNS = 50
MAX_PATTERN_CHARS = 1000


class PreviewFilesInput(ToolInput):
    """The arguments of ``preview_files``: which files, which page, how long a sample."""

    paths: list[Annotated[str, Field(min_length=1, max_length=MAX_PATTERN_CHARS)]] = Field(
        default_factory=list,
        max_length=MAX_PATTERNS,
        description="Paths or globs relative to the files root (e.g. ['reports/*.md', 'notes/**/*.csv']); empty: "
        "every file agrag reads.",
    )
    offset: int = Field(
        0,
        ge=0,
        le=MAX_OFFSET,
        description=f"Matched files to skip (the previous page's next_offset; 0 to {MAX_OFFSET:,}).",
    )
    limit: int = Field(10, ge=1, le=MAX_LIMIT, description=f"The most files in this page (1 to {MAX_LIMIT}).")
    chars: int = Field(
        2000, ge=MIN_CHARS, le=MAX_CHARS, description=f"The most characters of each sample ({MIN_CHARS}-{MAX_CHARS})."
    )


def _preview(context: ToolContext, arguments: PreviewFilesInput) -> PreviewPage:
    if context.scope.document_ids is not None:
        raise ScopedPreviewError()
    runtime = context.runtime
    return preview_files(
        arguments.paths,
        runtime.settings.agrag.files_root,
        runtime.config.ingest.loader.suffixes,
        offset=arguments.offset,
        limit=arguments.limit,
        chars=arguments.chars,
    )


PREVIEW_FILES: Tool[PreviewFilesInput, PreviewPage] = Tool(
    name="preview_files",
    title="Preview files of the files root",
    description=(
        "Before ingesting, see what the server's files hold: for each file matching the paths or globs (relative "
        "to the files root), its path, size, format and a sample of at most `chars` characters of text from the "
        "middle of the file (a PDF: its middle page), paged with offset/limit over the matched files (total given). "
        "Use it to design the ontology (labels and relation patterns) before calling ingest. Nothing is written. "
        "Cost: a few KB read per file, never a whole file."
    ),
    input_model=PreviewFilesInput,
    output_type=PreviewPage,
    handler=_preview,
)
