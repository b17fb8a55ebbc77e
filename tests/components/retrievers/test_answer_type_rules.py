import pytest

from agrag.components.data_models.query_analysis import AnswerType
from agrag.components.retrievers.answer_type_rules import answer_type, noun_type

PERSON, ORG, PLACE, PRODUCT = AnswerType.PERSON, AnswerType.ORGANIZATION, AnswerType.PLACE, AnswerType.PRODUCT
EVENT, DATE, QUANTITY, UNKNOWN = AnswerType.EVENT, AnswerType.DATE, AnswerType.QUANTITY, AnswerType.UNKNOWN


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who supplies the sensors for the Orion Planner?", PERSON),
        ("To whom did Maria Chen report?", PERSON),
        ("Whose lab built the frame?", PERSON),
        ("Where is Halyard Marine based?", PLACE),
        ("When did the skipper retire?", DATE),
        ("On what date did the skipper retire?", DATE),
        ("In what year was the hut built?", DATE),
        ("How many students took part?", QUANTITY),
        ("How much did the service cost?", QUANTITY),
        ("Roughly how long does the boat trip take?", QUANTITY),
        ("How deep was the water at the mooring?", QUANTITY),
        ("Which company employed the technician?", ORG),
        ("Which supplier services the freezer?", ORG),
        ("Which firm made the profiler?", ORG),
        ("Which instrument counts the phytoplankton?", PRODUCT),
        ("Which vessel carries the profiler?", PRODUCT),
        ("Which mooring carried two recorders?", PRODUCT),
        ("In which town is the maker of the recorders located?", PLACE),
        ("What is the standard turnaround for metabarcoding?", QUANTITY),
        ("What peak gust did the station measure?", QUANTITY),
        ("Which storm flooded the lab?", EVENT),
        ("Why did the freezer fail?", UNKNOWN),
        ("Did Kirsty Munro begin her PhD before Tomás Quiroga?", UNKNOWN),
        ("Which was built first, the hut or the boat?", UNKNOWN),
        ("What did the director say?", UNKNOWN),
    ],
)
def test_the_question_word_and_its_noun_give_the_answer_type(question: str, expected: AnswerType) -> None:
    assert answer_type(question) is expected


@pytest.mark.parametrize(
    "question",
    [
        "Where did Alistair Beaton's successor work before taking over?",
        "Where did the winner of the poster prize do her master's degree?",
        "Where was Maria Chen educated?",
    ],
)
def test_where_with_work_or_study_asks_for_an_organization(question: str) -> None:
    assert answer_type(question) is ORG


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which funder pays for the project whose filter samples were spoiled?", ORG),  # relative "whose"
        ("Who was the first president of the association which published the journal?", PERSON),  # relative "which"
        ("Scott Howell is a consultant who has worked with the mayor of what city?", PLACE),  # "what" in place
        ("The novel was published by a house that is based where?", PLACE),  # the question word last
        ("Barrier Device starred which Canadian actress?", PERSON),
        ("Chiang Kai-shek, who died on which date?", DATE),  # "who" after a comma relates
        ("Before joining the station, where did the PI work?", ORG),  # "where did" after a comma asks
        ("How to Eat, released in which year, is a book by Nigella Lawson", DATE),  # a title, not "how"
        ("There is a country with fast trains. Who mothered its ruler?", PERSON),  # a second sentence asks
    ],
)
def test_relative_question_words_are_passed_over(question: str, expected: AnswerType) -> None:
    assert answer_type(question) is expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the name of the pop band founded by one of the stars?", ORG),
        ("What part of the state are the badlands in?", PLACE),
        ("Which part of the cytometer was replaced?", PRODUCT),  # the part itself when "of" names nothing typed
        ("To which group of mountains does the range belong?", PLACE),
        ("Which staff member gets the datasets ready?", PERSON),
        ("Which company employed the technician who serviced it?", ORG),  # the phrase ends before "the technician"
        ("What low budget British comedy franchise did Peter Rogers produce?", PRODUCT),  # the last typed noun
        ("Name the mother of Edward Stafford", PERSON),
    ],
)
def test_the_noun_phrase_after_the_question_word_names_the_kind(question: str, expected: AnswerType) -> None:
    assert answer_type(question) is expected


def test_nouns_are_typed_in_the_singular_and_the_plural() -> None:
    assert noun_type("towns") is PLACE
    assert noun_type("People") is PERSON
    assert noun_type("companies") is ORG
    assert noun_type("phytoplankton") is None


def test_text_without_words_is_unknown() -> None:
    assert answer_type("") is UNKNOWN
    assert answer_type("?!") is UNKNOWN
