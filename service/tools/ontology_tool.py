"""The ``get_ontology`` tool: the ontology in force (configured labels and patterns plus additions), and the graph's."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agrag.components.data_models.ontology_additions import LabelInForce, PatternInForce
from agrag.pipelines.ontology_base import configured as with_remembered
from agrag.pipelines.ontology_in_force import additions_of, ontology_view, united
from agrag.pipelines.store_status import store_status
from agrag.service.tools.tool import Tool, ToolContext, ToolInput

MAX_OVERRIDES = 20


class OntologyInput(ToolInput):
    """``get_ontology`` takes no arguments (a client that runs ingestions with overrides may pass them)."""

    overrides: tuple[str, ...] = Field(
        (),
        max_length=MAX_OVERRIDES,
        description="Hydra overrides the ingestions use, e.g. ['ingest/ontology=engineering']; default: the "
        "server's configuration.",
    )


class OntologyOutput(BaseModel):
    """The ontology in force, beside the labels and types the graph actually holds."""

    model_config = ConfigDict(frozen=True)

    name: str | None = Field(..., description="The configured ontology's name (conf/ingest/ontology).")
    entity_labels: tuple[str, ...] = Field(
        ..., description="The entity labels extraction asks for and keeps; [] : every label is kept."
    )
    relation_types: dict[str, tuple[tuple[str, str], ...]] = Field(
        ..., description="Each relation type with its allowed (source label, target label) pairs; {} : any relation."
    )
    labels: tuple[LabelInForce, ...] = Field(
        (), description="Each label with its description and origin (config, or added by set_ontology)."
    )
    relations: tuple[PatternInForce, ...] = Field(
        (), description="Each relation pattern with its description and origin (config, or added by set_ontology)."
    )
    stored_entity_labels: dict[str, int] = Field(..., description="Entities per label in your documents.")
    stored_relation_types: dict[str, int] = Field(..., description="Relations per type in your documents.")


def _ontology(context: ToolContext, arguments: OntologyInput) -> OntologyOutput:
    scope = None if context.scope.document_ids is None else context.scope
    status = store_status(context.runtime.store, scope, None)
    additions = additions_of(context.runtime.store)
    configured = with_remembered(context.host.config(arguments.overrides).ingest.ontology, additions)
    force, view = united(configured, additions), ontology_view(configured, additions)
    return OntologyOutput(
        name=force.name,
        entity_labels=force.entity_labels,
        relation_types=dict(force.relation_types),
        labels=view.labels,
        relations=view.relations,
        stored_entity_labels=dict(status.entity_labels),
        stored_relation_types=dict(status.relation_types),
    )


GET_ONTOLOGY: Tool[OntologyInput, OntologyOutput] = Tool(
    name="get_ontology",
    title="Ontology of the graph",
    description=(
        "The ontology in force: the entity labels (with what each means) and relation types (with their allowed "
        "source and target labels) that extraction asks for and keeps, each marked as configured or added by "
        "set_ontology, beside how many entities per label and relations per type your documents hold. Use it to "
        "learn which labels to filter on, which relation types explore can follow, or to answer questions about "
        "the graph itself. Cost: a few graph counts, milliseconds."
    ),
    input_model=OntologyInput,
    output_type=OntologyOutput,
    handler=_ontology,
)
