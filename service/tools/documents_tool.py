"""The ``list_documents`` tool: the committed documents a caller may read, with their ids and versions."""

from __future__ import annotations

from pydantic import Field

from agrag.components.data_models.paging import MAX_OFFSET, MAX_PAGE_DOCUMENTS
from agrag.components.data_models.stored_document import StoredDocument
from agrag.service.tools.tool import Tool, ToolContext, ToolInput


class ListDocumentsInput(ToolInput):
    """Arguments of ``list_documents``: one page of the listing."""

    offset: int = Field(
        0,
        ge=0,
        le=MAX_OFFSET,
        description=f"How many documents to skip (for the next page; 0 to {MAX_OFFSET:,}); past the last, the "
        "page is empty.",
    )
    limit: int = Field(
        100, ge=1, le=MAX_PAGE_DOCUMENTS, description=f"The most documents returned (1 to {MAX_PAGE_DOCUMENTS})."
    )


def _documents(context: ToolContext, arguments: ListDocumentsInput) -> tuple[StoredDocument, ...]:
    scope = context.scope.documents
    if scope == []:
        return ()
    graph = context.runtime.store.graph
    return tuple(graph.documents(scope, offset=arguments.offset, limit=arguments.limit))


LIST_DOCUMENTS: Tool[ListDocumentsInput, tuple[StoredDocument, ...]] = Tool(
    name="list_documents",
    title="List the documents",
    description=(
        "The documents you may read, as committed now: id, current version, title, the path they were ingested "
        "from, and their chunk count, ordered by path, one page at a time. Use a document id to limit a search "
        "(filters.document_ids) or an evidence session (documents). A document appears once its ingestion batch "
        "has committed. Cost: one graph read."
    ),
    input_model=ListDocumentsInput,
    output_type=tuple[StoredDocument, ...],
    handler=_documents,
)
