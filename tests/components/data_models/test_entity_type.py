"""``EntityType``: the six types of the rule typer, and the one mapping onto an ontology's labels."""

import pytest

from agrag.components.choice_errors import UnknownChoiceError
from agrag.components.data_models.entity import is_typed
from agrag.components.data_models.entity_type import ONTOLOGY_SYNONYMS, EntityType

ENGINEERING = ["Person", "Team", "Organization", "Component", "Technology", "Incident", "Location", "Release", "Event"]


def test_from_str_parses_and_lists_the_six_types() -> None:
    assert EntityType.from_str("Place") is EntityType.PLACE
    with pytest.raises(UnknownChoiceError, match=r"Unknown entity type 'Planet'\. Use one of: Person, Organization, "):
        EntityType.from_str("Planet")


def test_an_open_ontology_takes_the_types_own_names_and_they_are_typed_labels() -> None:
    assert [t.label_in(()) for t in EntityType] == ["Person", "Organization", "Place", "Product", "Event", "Date"]
    assert all(is_typed(t.label_in(())) for t in EntityType)


def test_a_closed_ontology_takes_its_own_label_for_each_type() -> None:
    labels = {t: t.label_in(ENGINEERING) for t in EntityType}
    assert labels == {
        EntityType.PERSON: "Person",
        EntityType.ORGANIZATION: "Organization",
        EntityType.PLACE: "Location",
        EntityType.PRODUCT: "Component",
        EntityType.EVENT: "Event",
        EntityType.DATE: "Date",  # not declared: the pruner drops it and says so
    }


def test_the_ontologys_spelling_wins_and_the_most_specific_synonym_first() -> None:
    assert EntityType.PLACE.label_in(["location", "site"]) == "location"
    assert EntityType.PRODUCT.label_in(["Technology"]) == "Technology"
    assert EntityType.PRODUCT.label_in(["Technology", "Product"]) == "Product"
    assert EntityType.ORGANIZATION.label_in(["Company"]) == "Company"


def test_every_type_has_synonyms_starting_with_its_own_name() -> None:
    assert all(ONTOLOGY_SYNONYMS[t][0] == t.value for t in EntityType)
