"""``Ontology``: the entity labels and relation patterns a graph may hold, and ``PrunedReport``: what was dropped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NOT_NAME = re.compile(r"[^0-9a-z]+")


def relation_type_key(relation_type: str) -> str:
    """The key under which two spellings of a relation type are one.

    ``owns`` and ``OWNS``, ``member of`` and ``MEMBER_OF``, ``replaces ... as director`` and ``REPLACES_AS_DIRECTOR``.
    """
    return _NOT_NAME.sub("_", relation_type.casefold()).strip("_")


def relation_type_name(relation_type: str) -> str:
    """The ontology spelling of a predicate phrase: ``member of`` -> ``MEMBER_OF``."""
    return relation_type_key(relation_type).upper()


@dataclass(frozen=True, slots=True)
class RelationPattern:
    """A relation type allowed from entities of one label to entities of another (``*`` allows any label)."""

    type: str
    source: str = "*"
    target: str = "*"


@dataclass(frozen=True, slots=True)
class Ontology:
    """Declared entity labels and relation patterns.

    An empty ``entity_labels`` allows every label; an empty ``relations`` allows every relation type between any
    labels. Labels in ``untyped_labels`` (what an extractor says when it cannot type a name) are always kept.

    Attributes:
        entity_labels: The labels entities may have.
        relations: The (type, source label, target label) patterns relations may follow.
        untyped_labels: Labels kept whatever the declaration, since they mean "not typed" rather than a type.
        label_descriptions: (label, what it means) pairs the LLM extractor's prompt shows; with no declared labels,
            these labels are suggested.
        relation_descriptions: (relation type, what it means) pairs the LLM extractor's prompt shows.
    """

    entity_labels: tuple[str, ...] = ()
    relations: tuple[RelationPattern, ...] = ()
    untyped_labels: tuple[str, ...] = ("Name", "Acronym", "Topic", "Entity")
    label_descriptions: tuple[tuple[str, str], ...] = ()
    relation_descriptions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class DroppedLabel:
    """Entities dropped because their label is not declared: how many, one example name, and the documents."""

    label: str
    count: int
    example: str
    documents: tuple[str, ...] = ()  # the ids of the documents they were extracted from


@dataclass(frozen=True, slots=True)
class UndeclaredPattern:
    """Relations whose (type, source label, target label) is not declared, with one example.

    They are dropped, or kept as ``kept_as`` (``RELATED_TO``) when the ontology declares that type for their labels:
    the link stays in the graph, its predicate does not.
    """

    type: str
    source_label: str
    target_label: str
    count: int
    example: str
    documents: tuple[str, ...] = ()  # the ids of the documents they were extracted from
    kept_as: str = ""  # the declared type they were kept under instead (``RELATED_TO``), or "" when dropped

    @property
    def what(self) -> str:
        """The row's name in a report: ``relation pattern``, or ``relation pattern kept as RELATED_TO``."""
        return f"relation pattern kept as {self.kept_as}" if self.kept_as else "relation pattern"


@dataclass(frozen=True, slots=True)
class OntologyHint:
    """How to keep what an ingestion pruned: the ``set_ontology`` call and the ``agrag ontology add`` command.

    Attributes:
        arguments: The JSON arguments of the ``set_ontology`` tool (``POST /v1/ontology`` takes the same body).
        command: The ``agrag ontology add ...`` command line that adds the same.
        skipped: Dropped labels or relation types that cannot be added as they are (not a valid name), with why.
        documents: The documents the hinted labels and patterns were dropped from: the ones to re-extract.
        reextract: The ``agrag reextract ...`` command line that re-extracts those documents once the ontology grew.
    """

    arguments: str
    command: str
    skipped: tuple[str, ...] = ()
    documents: tuple[str, ...] = ()
    reextract: str = ""


@dataclass(frozen=True, slots=True)
class PrunedReport:
    """What extraction found that the ontology did not allow, so it stayed out of the graph.

    Attributes:
        entities_kept: Entities kept.
        entities_dropped: Entities dropped for an undeclared label.
        relations_kept: Relations kept.
        relations_dropped: Relations dropped (undeclared pattern or an endpoint that is not a kept entity).
        relations_generalised: Relations of an undeclared pattern kept as ``RELATED_TO`` (counted in the kept).
        dropped_labels: One row per undeclared label.
        undeclared_patterns: One row per undeclared (type, source label, target label), dropped or kept as
            ``RELATED_TO``.
        unknown_endpoints: Relations whose source or target is no kept entity, and one example of them.
        unknown_endpoint_example: ``source -TYPE-> target`` of one such relation.
        hint: The ``set_ontology`` call and CLI command that would keep the dropped labels and patterns (None when
            none were dropped).
    """

    entities_kept: int = 0
    entities_dropped: int = 0
    relations_kept: int = 0
    relations_dropped: int = 0
    relations_generalised: int = 0
    dropped_labels: tuple[DroppedLabel, ...] = ()
    undeclared_patterns: tuple[UndeclaredPattern, ...] = ()
    unknown_endpoints: int = 0
    unknown_endpoint_example: str = field(default="")
    hint: OntologyHint | None = None

    @property
    def empty(self) -> bool:
        """True when nothing was dropped or kept under another type."""
        return not self.entities_dropped and not self.relations_dropped and not self.relations_generalised
