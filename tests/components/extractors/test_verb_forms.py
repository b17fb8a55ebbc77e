import pytest

from agrag.components.extractors.verb_forms import base_form, present_tense


@pytest.mark.parametrize(
    ("forms", "expected"),
    [
        (("own", "owns", "owned", "owning"), "owns"),
        (("supply", "supplies", "supplied", "supplying"), "supplies"),
        (("manage", "manages", "managed", "managing"), "manages"),
        (("replace", "replaced", "replacing"), "replaces"),
        (("study", "studied", "studies"), "studies"),
        (("write", "wrote", "written"), "writes"),
        (("lead", "led", "leads"), "leads"),
        (("run", "ran", "runs", "running"), "runs"),
        (("plan", "planned", "planning"), "plans"),
        (("add", "added"), "adds"),
        (("reach", "reached", "reaches"), "reaches"),
        (("control", "controlled"), "controls"),
        (("flee", "fled", "flees"), "flees"),
    ],
)
def test_every_form_of_a_verb_is_written_in_the_third_person_present(forms: tuple[str, ...], expected: str) -> None:
    assert {present_tense(form) for form in forms} == {expected}


@pytest.mark.parametrize(
    ("past", "present"),
    [
        ("explored", "explores"),
        ("invaded", "invades"),
        ("initiated", "initiates"),
        ("quoted", "quotes"),
        ("visited", "visits"),
        ("opened", "opens"),
        ("treated", "treats"),
        ("belonged", "belongs"),
        ("arranged", "arranges"),
        ("settled", "settles"),
        ("honored", "honors"),
        ("Owned", "owns"),
    ],
)
def test_verbs_no_table_knows_get_the_base_their_present_tense_has(past: str, present: str) -> None:
    assert present_tense(past) == present_tense(present) == present
    assert base_form(past) == base_form(present)
