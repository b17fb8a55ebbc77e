"""The rules of growing an ontology: which names are allowed, and what a ``set_ontology`` call adds.

An addition never removes or renames anything: a label or pattern already there is reported as already present;
a description is added only where there was none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agrag.components.data_models.ontology import Ontology
from agrag.components.data_models.ontology_additions import (
    WILDCARD,
    AdditionResult,
    AdditionStatus,
    LabelSpec,
    OntologyAdditions,
    RelationSpec,
)
from agrag.components.ontology_errors import (
    InvalidOntologyNameError,
    OntologyError,
    ReservedOntologyNameError,
    UndeclaredEndpointError,
)
from agrag.components.stores.kuzu_cypher import SCHEMA, schema_object
from agrag.pipelines.config_models import OntologyConfig

MAX_NAME_CHARS = 64
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
OWN_TABLES: frozenset[str] = frozenset(
    found[0] for statement in SCHEMA if (found := schema_object(statement)) is not None and found[1] is None
)
"""agrag's own Kùzu tables (read from the schema), which no label or relation type may be named."""
UNTYPED_LABELS = Ontology().untyped_labels


def check_name(kind: str, name: str) -> None:
    """Refuse a label or relation type that is not a plain name, or that is one of agrag's own table names.

    Raises:
        InvalidOntologyNameError: not letters, digits and ``_`` starting with a letter, or too long.
        ReservedOntologyNameError: the name of one of agrag's tables, in any case.
    """
    if len(name) > MAX_NAME_CHARS or not _NAME.fullmatch(name):
        raise InvalidOntologyNameError(kind, name, MAX_NAME_CHARS)
    if name.casefold() in {table.casefold() for table in OWN_TABLES}:
        raise ReservedOntologyNameError(kind, name, OWN_TABLES)


def valid_name(name: str) -> bool:
    """Whether ``check_name`` accepts ``name`` (as a label or a relation type)."""
    try:
        check_name("label", name)
    except OntologyError:
        return False
    return True


def _clean(text: str) -> str:
    """A description on one line (the prompt lists one per line)."""
    return " ".join(text.split())


class _Growing:
    """The additions being built by one call, with what the configured ontology already holds."""

    def __init__(self, config: OntologyConfig, current: OntologyAdditions) -> None:
        self.config = config
        self.labels = {spec.label: spec for spec in current.labels}
        self.relations = {spec.pattern: spec for spec in current.relations}
        self.results: list[AdditionResult] = []

    def known_label(self, label: str) -> str | None:
        """The spelling under which ``label`` is already declared (compared without case), if it is."""
        folded = label.casefold()
        for known in (*self.config.entity_labels, *self.labels, *UNTYPED_LABELS):
            if known.casefold() == folded:
                return known
        return None

    def label_description(self, label: str) -> str:
        return self.config.label_descriptions.get(label, "") or (
            self.labels[label].description if label in self.labels else ""
        )

    def add_label(self, spec: LabelSpec) -> None:
        check_name("label", spec.label)
        description = _clean(spec.description)
        known = self.known_label(spec.label)
        if known is None:
            self.labels[spec.label] = LabelSpec(label=spec.label, description=description)
            self._result("label", spec.label, AdditionStatus.ADDED)
        elif known in UNTYPED_LABELS:
            note = f"{known} is how the extractor labels names it cannot type; such entities are always kept"
            self._result("label", spec.label, AdditionStatus.ALREADY_PRESENT, note)
        elif description and not self.label_description(known):
            self.labels[known] = LabelSpec(label=known, description=description)
            self._result("label", known, AdditionStatus.DESCRIBED)
        else:
            note = "" if known == spec.label else f"declared as {known!r}"
            if description and self.label_description(known) != description:
                note = ", ".join(filter(None, [note, "its description stays as it was (descriptions never change)"]))
            self._result("label", known, AdditionStatus.ALREADY_PRESENT, note)

    def check_endpoint(self, spec: RelationSpec, label: str) -> None:
        if label == WILDCARD:
            return
        check_name("label", label)
        if label in UNTYPED_LABELS:
            raise OntologyError(
                f"The relation pattern {spec.text} uses {label!r}, the label of names the extractor cannot type; a "
                "pattern matches such entities only with '*'. Use '*' there instead."
            )
        if self.config.entity_labels and label not in {*self.config.entity_labels, *self.labels}:
            raise UndeclaredEndpointError(spec.text, label, {*self.config.entity_labels, *self.labels})

    def add_relation(self, spec: RelationSpec) -> None:
        check_name("relation type", spec.type)
        for label in (spec.source, spec.target):
            self.check_endpoint(spec, label)
        description = _clean(spec.description)
        configured = (spec.source, spec.target) in self.config.relation_types.get(spec.type, ())
        described = self.config.relation_descriptions.get(spec.type, "") or next(
            (r.description for r in self.relations.values() if r.type == spec.type and r.description), ""
        )
        if not configured and spec.pattern not in self.relations:
            self.relations[spec.pattern] = RelationSpec(
                type=spec.type, source=spec.source, target=spec.target, description="" if described else description
            )
            self._result("relation", spec.text, AdditionStatus.ADDED)
        elif description and not described:
            self.relations[spec.pattern] = spec.model_copy(update={"description": description})
            self._result("relation", spec.text, AdditionStatus.DESCRIBED)
        else:
            self._result("relation", spec.text, AdditionStatus.ALREADY_PRESENT)

    def _result(self, kind: str, name: str, status: AdditionStatus, note: str = "") -> None:
        self.results.append(AdditionResult(kind=kind, name=name, status=status, note=note))

    def additions(self) -> OntologyAdditions:
        return OntologyAdditions(labels=tuple(self.labels.values()), relations=tuple(self.relations.values()))


def grow(
    config: OntologyConfig,
    current: OntologyAdditions,
    labels: Sequence[LabelSpec],
    relations: Sequence[RelationSpec],
) -> tuple[OntologyAdditions, tuple[AdditionResult, ...]]:
    """The additions after adding ``labels`` then ``relations`` to ``current`` (over the configured ``config``).

    Labels come first, so a pattern may use a label the same call adds. Everything is checked before anything is
    returned: one refused item refuses the whole call.

    Raises:
        OntologyError: a bad name, an own table name, or an endpoint the ontology does not declare.
    """
    growing = _Growing(config, current)
    for label in labels:
        growing.add_label(label)
    for relation in relations:
        growing.add_relation(relation)
    grown = growing.additions()
    # the remembered configured ontology is not this call's to change
    kept = current.model_copy(update={"labels": grown.labels, "relations": grown.relations})
    return kept, tuple(growing.results)
