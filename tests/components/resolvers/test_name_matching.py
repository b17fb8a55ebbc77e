import pytest

from agrag.components.data_models.entity import Entity, entity_id_for, normalize_name
from agrag.components.resolvers.merge_groups import Node
from agrag.components.resolvers.name_matching import (
    MAX_BLOCK,
    acronym_expansions,
    blocked_pairs,
    initials,
    labels_compatible,
    looks_like_acronym,
    name_similarity,
    number_words,
)


def node(name: str, label: str = "Name", *, known: bool = False) -> Node:
    return Node(Entity(entity_id_for(name, label), name, label), normalize_name(name), known, 1)


def names(pairs: list[tuple[Node, Node]]) -> set[frozenset[str]]:
    return {frozenset((a.name, b.name)) for a, b in pairs}


def test_similarity_is_the_best_of_token_sort_and_plain_ratio() -> None:
    assert name_similarity("maria chen", "mario chen") == 90.0
    assert name_similarity("chen maria", "maria chen") == 100.0  # word order does not matter
    assert name_similarity("vega perception", "vega perceptoin") == pytest.approx(93.33, abs=0.01)


def test_number_words_are_the_words_with_digits_sorted() -> None:
    assert number_words("line 5 of v2") == ["5", "v2"]
    assert number_words("assembly line") == []
    assert number_words("line 4") != number_words("line 5")


def test_labels_are_compatible_when_equal_or_one_is_untyped() -> None:
    assert labels_compatible("Person", "person")
    assert labels_compatible("Topic", "Organization") and labels_compatible("Person", "")
    assert not labels_compatible("Person", "Organization")


def test_initials_with_and_without_stopwords() -> None:
    assert initials("simultaneous localization and mapping") == {"slam", "slm"}
    assert initials("project manager") == {"pm"}
    assert initials("atlas") == set()
    assert initials("the a") == {"ta"}  # the variant without stopwords is too short


def test_acronyms_are_short_single_words_with_capitals_or_the_acronym_label() -> None:
    assert looks_like_acronym("SLAM", "slam", "Name")
    assert looks_like_acronym("slam", "slam", "Acronym")
    assert not looks_like_acronym("Slam", "slam", "Name")  # one capital is a word
    assert not looks_like_acronym("AB CD", "ab cd", "Acronym")  # two words
    assert not looks_like_acronym("ABCDEFGHIJK", "abcdefghijk", "Acronym")  # too long


def test_blocked_pairs_share_a_word_of_three_letters_and_are_not_both_stored() -> None:
    vega, typo = node("Vega Perception"), node("Vega Perceptoin")
    same_key, stored = node("vega perception", "Person"), node("Vega Stack", known=True)
    stored_too, ai_lab, ai_model = node("Vega Module", known=True), node("AI Lab"), node("AI Model")
    pairs = blocked_pairs([vega, typo, same_key, stored, stored_too, ai_lab, ai_model])
    assert names(pairs) == {
        frozenset(p)
        for p in [
            ("Vega Perception", "Vega Perceptoin"),
            ("Vega Perception", "Vega Stack"),
            ("Vega Perception", "Vega Module"),
            ("Vega Perceptoin", "vega perception"),
            ("Vega Perceptoin", "Vega Stack"),
            ("Vega Perceptoin", "Vega Module"),
            ("vega perception", "Vega Stack"),
            ("vega perception", "Vega Module"),
        ]
    }  # not the same normalized name, not the two stored ones, not "ai" (too short)
    assert [(a.id, b.id) for a, b in pairs] == sorted((a.id, b.id) for a, b in pairs)


def test_a_word_shared_by_too_many_entities_does_not_block() -> None:
    crowd = [node(f"System {n}") for n in range(MAX_BLOCK + 1)]
    assert blocked_pairs(crowd) == []
    assert len(blocked_pairs(crowd[:MAX_BLOCK])) == MAX_BLOCK * (MAX_BLOCK - 1) // 2


def test_acronym_expansions_list_every_name_with_those_initials() -> None:
    slam, pm = node("SLAM", "Acronym"), node("PM", "Acronym")
    long, manager, miller = node("Simultaneous Localization and Mapping"), node("Project Manager"), node("Peter Miller")
    found = acronym_expansions([slam, long, pm, manager, miller, node("XYZ")])
    assert [(acronym.name, [o.name for o in others]) for acronym, others in found] == [
        ("SLAM", ["Simultaneous Localization and Mapping"]),
        ("PM", ["Project Manager", "Peter Miller"]),
    ]  # "XYZ" expands to nothing and is left out
