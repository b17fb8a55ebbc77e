import pytest

from agrag.components.retrievers.query_hints import entity_hints, hint_spans


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which scientist looks after the cytometer Lukas Brenner books?", ("Lukas Brenner",)),
        ("What total did Halyard quote for the CT-60's annual service?", ("Halyard", "CT-60")),
        ("Which yard fixed the boat used for cruise SH-24-07?", ("SH-24-07",)),
        ("In which town is the maker of DEEPSONG's recorders located?", ("DEEPSONG",)),
        ("Who replaced Dr. Okafor as director of Macleod & Rae?", ("Dr. Okafor", "Macleod & Rae")),
        ("Did Kirsty Munro begin her PhD before Tomás Quiroga?", ("Kirsty Munro", "Tomás Quiroga")),
        ("Which was built first, the Carrick Island hut or the RV Shearwater?", ("Carrick Island", "RV Shearwater")),
        (
            'Who sang "Wonderland by Night" on the album “A Man Without Love”?',
            ("Wonderland by Night", "A Man Without Love"),
        ),
        (
            "Which founders of the Mississippi Institute of Arts and Letters wrote it?",
            ("Mississippi Institute of Arts and Letters",),
        ),
        ("Jon L. Luther was the chairman of which company?", ("Jon L. Luther",)),
        ("Who was in the Battle of Mine Creek?", ("Battle of Mine Creek",)),
        ("Which studio released Big Hero 6 in 2014?", ("Big Hero 6",)),
        ("Where did the PI of DEEPSONG work?", ("DEEPSONG",)),
    ],
)
def test_names_are_capitalised_runs_codes_quotes_and_titled_names(question: str, expected: tuple[str, ...]) -> None:
    assert entity_hints(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "Roughly how many samples were compromised when the freezer failed in August 2024?",
        "What total, before VAT, was quoted in May 2025?",
        "Name the instrument that counts phytoplankton on Monday",
        "how many students took part?",
        "",
    ],
)
def test_openers_months_days_and_common_abbreviations_are_no_names(question: str) -> None:
    assert entity_hints(question) == ()


def test_a_name_is_given_once_in_order_with_where_it_is_written() -> None:
    question = "Who does BLOOMCAST share with Gannet Bay, and is Bloomcast at Gannet Bay's harbour?"
    assert entity_hints(question) == ("BLOOMCAST", "Gannet Bay")
    start, end, text = hint_spans(question)[1]
    assert question[start:end] == text == "Gannet Bay"
