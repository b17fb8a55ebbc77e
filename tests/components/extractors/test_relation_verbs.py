import pytest

from agrag.components.extractors.relation_verbs import (
    gerund,
    guess_past,
    known_verb,
    past,
    predicate_form,
    third_person,
)


@pytest.mark.parametrize(
    ("lemma", "present", "past_form", "ing"),
    [
        ("supply", "supplies", "supplied", "supplying"),
        ("manage", "manages", "managed", "managing"),
        ("fix", "fixes", "fixed", "fixing"),
        ("stop", "stops", "stopped", "stopping"),
        ("play", "plays", "played", "playing"),
        ("die", "dies", "died", "dying"),
        ("build", "builds", "built", "building"),
        ("visit", "visits", "visited", "visiting"),
    ],
)
def test_a_lemma_inflects_by_rule_or_by_its_irregular_forms(lemma: str, present: str, past_form: str, ing: str) -> None:
    assert (third_person(lemma), past(lemma), gerund(lemma)) == (present, past_form, ing)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("supplied", ("supply", "past")),
        ("Owns", ("own", "present")),
        ("born", ("bear", "participle")),
        ("took", ("take", "past")),
        ("managing", ("manage", "gerund")),
        ("found", ("find", "past")),  # "where is it found", not the base of "founded"
        ("founded", ("found", "past")),
        ("phytoplankton", None),
    ],
)
def test_known_verbs_are_found_in_every_form(word: str, expected: tuple[str, str] | None) -> None:
    assert known_verb(word) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("compromised", "compromise"),
        ("spoiled", "spoil"),
        ("free-flowed", "free-flow"),
        ("occupied", "occupy"),
        ("grabbed", "grab"),
        ("located", "locate"),
        ("hundred", None),
        ("red", None),
        ("walks", None),
    ],
)
def test_unknown_past_forms_are_guessed_by_spelling(word: str, expected: str | None) -> None:
    assert guess_past(word) == expected


def test_lasting_relations_are_present_and_one_off_events_past() -> None:
    assert [predicate_form(v) for v in ("supply", "own", "manage")] == ["supplies", "owns", "manages"]
    assert [predicate_form(v) for v in ("found", "study", "replace", "bear")] == [
        "founded",
        "studied",
        "replaced",
        "born",
    ]
    assert predicate_form("base", participle=True) == "based"
    assert predicate_form("base") == "bases"
