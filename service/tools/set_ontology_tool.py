"""The ``set_ontology`` tool: grow the ontology in force with labels, descriptions and relation patterns.

A write tool: an MCP server lists it only with ``--allow-write``, and only a token that may read every document may
call it (over HTTP at ``POST /v1/ontology``, with the same body).
"""

from __future__ import annotations

from pydantic import Field, model_validator

from agrag.components.data_models.ontology_additions import LabelSpec, OntologyChange, RelationSpec
from agrag.pipelines.ontology_in_force import add_to_ontology
from agrag.service.tools.errors import ScopedWriteError
from agrag.service.tools.tool import Tool, ToolContext, ToolInput

MAX_LABELS = 50
MAX_RELATIONS = 100
MAX_OVERRIDES = 20


class SetOntologyInput(ToolInput):
    """The arguments of ``set_ontology``: labels and relation patterns to add (at least one of them)."""

    labels: tuple[LabelSpec, ...] = Field(
        (),
        max_length=MAX_LABELS,
        description="Entity labels to add, each with an optional description the LLM extractor reads, e.g. "
        "[{'label': 'Vendor', 'description': 'A company that sells us parts'}]. Letters, digits and _, starting "
        "with a letter.",
    )
    relations: tuple[RelationSpec, ...] = Field(
        (),
        max_length=MAX_RELATIONS,
        description="Relation patterns to add, e.g. [{'type': 'SUPPLIES', 'source': 'Vendor', 'target': "
        "'Component'}]; source and target are declared labels (or ones this call adds) or '*' for any.",
    )
    overrides: tuple[str, ...] = Field(
        (),
        max_length=MAX_OVERRIDES,
        description="Hydra overrides the ingestions use, e.g. ['ingest/ontology=engineering'] (its labels count "
        "as declared); default: the server's configuration.",
    )

    @model_validator(mode="after")
    def _something(self) -> SetOntologyInput:
        if not self.labels and not self.relations:
            raise ValueError("give `labels` and/or `relations` to add")
        return self


def _set_ontology(context: ToolContext, arguments: SetOntologyInput) -> OntologyChange:
    if context.scope.document_ids is not None:
        raise ScopedWriteError("set_ontology")
    config = context.host.config(arguments.overrides)
    return add_to_ontology(config, context.runtime.store, arguments.labels, arguments.relations)


SET_ONTOLOGY: Tool[SetOntologyInput, OntologyChange] = Tool(
    name="set_ontology",
    title="Grow the ontology",
    description=(
        "Add entity labels (with a description of what each means) and relation patterns (type, source label, "
        "target label) to the ontology in force, so that later ingestions and re-extractions extract and keep "
        "them. It never removes anything; what is already there is reported as already_present. Use it when an "
        "ingestion's pruned report shows labels or relations worth keeping (the report gives the exact call). Ask "
        "the user first: it changes what the graph keeps. Returns each item's status and the ontology in force. "
        "Cost: milliseconds; documents ingested before change only when ingested again or re-extracted."
    ),
    input_model=SetOntologyInput,
    output_type=OntologyChange,
    handler=_set_ontology,
    writes=True,
)
