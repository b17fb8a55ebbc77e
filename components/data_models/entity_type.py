"""``EntityType``: the kinds of entity the offline extractor types, and the label each takes in an ontology."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.data_models.closed_set import ClosedSet


class EntityType(ClosedSet, what="entity type"):
    """What a name names, as the rule typer (``RuleEntityTyper``) decides it with no model.

    ``Product`` covers artifacts, instruments, vessels and codes (``CT-60``, ``GB-3R``, ``SH-24-07``); ``Date``
    covers dates and months (``31 October 2024``, ``April 2025``). A name none of these fits keeps an untyped label.
    """

    PERSON = "Person"
    ORGANIZATION = "Organization"
    PLACE = "Place"
    PRODUCT = "Product"
    EVENT = "Event"
    DATE = "Date"

    def label_in(self, entity_labels: Sequence[str]) -> str:
        """The label this type takes under an ontology that declares ``entity_labels``.

        An open ontology (no labels) takes the type's own name. A closed one takes the first of the type's
        synonyms it declares, in the ontology's spelling (``Place`` is ``Location``, ``Product`` is ``Component``
        or ``Technology`` when only those are declared); with none declared the type's own name stays, so the
        ontology pruner drops it and says so.

        Usage:
            ```python
            EntityType.PLACE.label_in(["Person", "Location"])  # "Location"
            ```
        """
        declared = {label.casefold(): label for label in entity_labels}
        for synonym in ONTOLOGY_SYNONYMS[self]:
            if synonym.casefold() in declared:
                return declared[synonym.casefold()]
        return self.value


# The one place the six types meet ontology labels: each type's synonyms, most specific first.
ONTOLOGY_SYNONYMS: dict[EntityType, tuple[str, ...]] = {
    EntityType.PERSON: ("Person", "People", "Human", "Individual", "Author"),
    EntityType.ORGANIZATION: ("Organization", "Organisation", "Org", "Company", "Institution", "Agency", "Supplier"),
    EntityType.PLACE: ("Place", "Location", "GPE", "Site", "Geography", "Region"),
    EntityType.PRODUCT: ("Product", "Component", "Technology", "Artifact", "Artefact", "Instrument", "Device", "Tool"),
    EntityType.EVENT: ("Event", "Meeting", "Incident"),
    EntityType.DATE: ("Date", "Time", "DateTime", "Period"),
}
