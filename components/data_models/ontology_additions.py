"""What ``set_ontology`` added to the configured ontology: labels and relation patterns, with their descriptions."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

# Generous bounds against abuse; the name rules (characters, 64 characters) are checked with typed errors.
MAX_NAME_INPUT = 200
MAX_DESCRIPTION_CHARS = 500
WILDCARD = "*"


class LabelSpec(BaseModel):
    """An entity label, with what it means (the LLM extractor reads the description)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(..., min_length=1, max_length=MAX_NAME_INPUT, description="The label, e.g. Vendor.")
    description: str = Field(
        "",
        max_length=MAX_DESCRIPTION_CHARS,
        description="What entities of this label are, e.g. 'A company that sells us parts' (optional).",
    )


class RelationSpec(BaseModel):
    """A relation type allowed from entities of one label to entities of another ('*': any label)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str = Field(..., min_length=1, max_length=MAX_NAME_INPUT, description="The relation type, e.g. SUPPLIES.")
    source: str = Field(
        WILDCARD, min_length=1, max_length=MAX_NAME_INPUT, description="The source entity's label, or '*' for any."
    )
    target: str = Field(
        WILDCARD, min_length=1, max_length=MAX_NAME_INPUT, description="The target entity's label, or '*' for any."
    )
    description: str = Field("", max_length=MAX_DESCRIPTION_CHARS, description="What the relation means (optional).")

    @property
    def pattern(self) -> tuple[str, str, str]:
        """(type, source label, target label): what makes two specs the same pattern."""
        return (self.type, self.source, self.target)

    @property
    def text(self) -> str:
        """``(source)-[TYPE]->(target)``."""
        return f"({self.source})-[{self.type}]->({self.target})"


class OntologyAdditions(BaseModel):
    """What a data dir remembers of its ontology: the configured ones it was built with, and what was added.

    ``labels`` and ``relations`` are what ``set_ontology`` added, in the order they were added. ``base_*`` is the
    union of the configured ontologies (``conf/ingest/ontology``) every ingestion declared, so a later command that
    names no ontology (the default ``open`` one declares nothing) keeps that ontology in force.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    labels: tuple[LabelSpec, ...] = ()
    relations: tuple[RelationSpec, ...] = ()
    base_name: str = ""
    base_labels: tuple[LabelSpec, ...] = ()
    base_relations: tuple[RelationSpec, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nothing was added and no configured ontology was remembered."""
        return not self.labels and not self.relations and not self.base_labels and not self.base_relations


class Origin(StrEnum):
    """Where a label or relation pattern of the ontology in force comes from."""

    CONFIG = "config"
    ADDED = "added"


class LabelInForce(BaseModel):
    """One label of the ontology in force."""

    model_config = ConfigDict(frozen=True)

    label: str = Field(..., description="The label.")
    description: str = Field("", description="What entities of this label are ('' when not described).")
    origin: Origin = Field(..., description="config: from conf/ingest/ontology; added: by set_ontology.")


class PatternInForce(BaseModel):
    """One relation pattern of the ontology in force."""

    model_config = ConfigDict(frozen=True)

    type: str = Field(..., description="The relation type.")
    source: str = Field(..., description="The source entity's label ('*': any).")
    target: str = Field(..., description="The target entity's label ('*': any).")
    description: str = Field("", description="What the relation type means ('' when not described).")
    origin: Origin = Field(..., description="config: from conf/ingest/ontology; added: by set_ontology.")


class OntologyView(BaseModel):
    """The ontology in force: the configured one united with every addition of ``set_ontology``."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(..., description="The configured ontology's name (conf/ingest/ontology).")
    every_label_allowed: bool = Field(
        ..., description="True when the ontology declares no labels: every label is kept (added ones are suggested)."
    )
    every_relation_allowed: bool = Field(
        ..., description="True when the ontology declares no relation types: every relation is kept."
    )
    labels: tuple[LabelInForce, ...] = Field(..., description="The labels, configured ones first.")
    relations: tuple[PatternInForce, ...] = Field(..., description="The relation patterns, configured ones first.")


class AdditionStatus(StrEnum):
    """What ``set_ontology`` did with one label or relation pattern."""

    ADDED = "added"
    DESCRIBED = "described"  # it was there without a description; now it has one
    ALREADY_PRESENT = "already_present"


class AdditionResult(BaseModel):
    """One label or relation pattern of a ``set_ontology`` call, and what became of it."""

    model_config = ConfigDict(frozen=True)

    kind: str = Field(..., description="label or relation.")
    name: str = Field(..., description="The label, or the pattern as (source)-[TYPE]->(target).")
    status: AdditionStatus = Field(..., description="added, described, or already_present (nothing changed).")
    note: str = Field("", description="Why nothing changed, when it did not.")


class OntologyChange(BaseModel):
    """The outcome of ``set_ontology``: each item's status, and the ontology in force afterwards."""

    model_config = ConfigDict(frozen=True)

    results: tuple[AdditionResult, ...] = Field(..., description="One row per label and relation pattern given.")
    ontology: OntologyView = Field(..., description="The ontology in force after the call.")
    message: str = Field(..., description="What changed, and when it takes effect.")

    @property
    def changed(self) -> bool:
        """True when anything was added or described."""
        return any(r.status is not AdditionStatus.ALREADY_PRESENT for r in self.results)
