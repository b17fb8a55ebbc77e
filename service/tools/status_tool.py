"""The ``status`` tool: what the data dir holds, what its graph was built with, and the last ingestion."""

from __future__ import annotations

from agrag.components.data_models.store_status import StoreStatus
from agrag.pipelines.store_status import store_status
from agrag.service.tools.tool import Tool, ToolContext, ToolInput


class StatusInput(ToolInput):
    """``status`` takes no arguments."""


def _status(context: ToolContext, arguments: StatusInput) -> StoreStatus:
    scope = None if context.scope.document_ids is None else context.scope
    return store_status(context.runtime.store, scope, context.host.last_ingestion())


STATUS: Tool[StatusInput, StoreStatus] = Tool(
    name="status",
    title="Data dir status",
    description=(
        "What the data dir holds now: documents, chunks, entities, relations and communities, entities per label "
        "and relations per type, the ontology the graph was built with, the store generation (it changes on every "
        "committed write) and the last ingestion with its outcome. For a token limited to documents, the counts "
        "are of those documents and the last ingestion is left out. Use it to learn what can be asked before "
        "searching, or to see whether an ingestion has landed. Cost: a few graph counts, milliseconds to a second "
        "on a large graph."
    ),
    input_model=StatusInput,
    output_type=StoreStatus,
    handler=_status,
)
