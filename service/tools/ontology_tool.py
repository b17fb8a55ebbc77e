"""The ``get_ontology`` tool: the entity labels and relation types the graph was built with, and what it holds."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agrag.pipelines.store_status import store_status
from agrag.service.tools.tool import Tool, ToolContext, ToolInput


class OntologyInput(ToolInput):
    """``get_ontology`` takes no arguments."""


class OntologyOutput(BaseModel):
    """The ontology the graph was built with, beside the labels and types it actually holds."""

    model_config = ConfigDict(frozen=True)

    name: str | None = Field(..., description="The ontology's name; null when the data dir recorded none.")
    entity_labels: tuple[str, ...] = Field(..., description="The entity labels extraction was asked for.")
    relation_types: dict[str, tuple[tuple[str, str], ...]] = Field(
        ..., description="Each relation type with its allowed (source label, target label) pairs; [] : any pair."
    )
    stored_entity_labels: dict[str, int] = Field(..., description="Entities per label in your documents.")
    stored_relation_types: dict[str, int] = Field(..., description="Relations per type in your documents.")


def _ontology(context: ToolContext, arguments: OntologyInput) -> OntologyOutput:
    scope = None if context.scope.document_ids is None else context.scope
    status = store_status(context.runtime.store, scope, None)
    ontology = status.ontology
    return OntologyOutput(
        name=ontology.name if ontology is not None else None,
        entity_labels=ontology.entity_labels if ontology is not None else (),
        relation_types=dict(ontology.relation_types) if ontology is not None else {},
        stored_entity_labels=dict(status.entity_labels),
        stored_relation_types=dict(status.relation_types),
    )


GET_ONTOLOGY: Tool[OntologyInput, OntologyOutput] = Tool(
    name="get_ontology",
    title="Ontology of the graph",
    description=(
        "The entity labels and relation types (with their allowed source and target labels) the graph was built "
        "with, beside how many entities per label and relations per type your documents hold. Use it to learn "
        "which labels to filter on, which relation types explore can follow, or to answer questions about the "
        "graph itself. Cost: a few graph counts, milliseconds."
    ),
    input_model=OntologyInput,
    output_type=OntologyOutput,
    handler=_ontology,
)
