import pytest

from agrag.components.retrievers.query_predicates import normal_predicate, relation_keywords


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who supplies the sensors?", ("supplies",)),
        ("Which workshop is owned by Rab Cowie?", ("owns",)),
        ("Who replaced Alistair Beaton as director?", ("replaced ... as",)),
        ("Which university did she study at?", ("studied at",)),
        ("Where did she study?", ("studied at",)),
        ("Who manages the facility that processes the samples?", ("manages", "processes")),
        ("Which scientist is responsible for the instrument BLOOMCAST uses?", ("responsible for", "uses")),
        (
            "Who from the manufacturer came out to fix the cytometer that Lukas Brenner looks after?",
            ("comes", "fixes", "looks after"),
        ),
        ("How many students took part in the course?", ("takes part in",)),
        ("In which town is the company based?", ("based in",)),
        ("Where was Maria Chen born?", ("born in",)),
        ("Which contractor will carry out the refurbishment?", ("carries out",)),
        ("How many samples were compromised when the freezer failed?", ("compromises", "fails")),
    ],
)
def test_verbs_give_their_predicate_form_with_their_particle(question: str, expected: tuple[str, ...]) -> None:
    assert relation_keywords(question) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("In which town is the maker of the recorders located?", ("makes", "located in")),
        ("Where did Alistair Beaton's successor work?", ("succeeded", "works at")),
        ("Who is the manager of the facility?", ("manages",)),
        ("Which funder pays for the project?", ("pays for",)),  # "funder" asks for the answer, it is no relation
    ],
)
def test_relational_nouns_give_the_predicate_they_state(question: str, expected: tuple[str, ...]) -> None:
    assert relation_keywords(question) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What total did Halyard quote for the CT-60's annual service?", ("quotes",)),  # "service": a noun
        ("On what date did the long-serving skipper retire?", ("retired",)),  # "skipper": a noun before the verb
        ("Who now skippers the vessel?", ("skippers",)),  # the same word as a verb
        ("When did the RV Shearwater Service Group close?", ("closes",)),  # words of names are skipped
        ("How long is the default embargo?", ()),
    ],
)
def test_nouns_spelt_like_verbs_and_names_give_no_relation(question: str, expected: tuple[str, ...]) -> None:
    assert relation_keywords(question) == expected


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("Supplied by", "supplies"),
        ("studies at", "studied at"),
        ("is located in", "is located in"),
        ("based in", "based in"),
        ("member of", "member of"),
        ("  ", ""),
    ],
)
def test_a_predicate_from_elsewhere_is_put_in_the_same_form(phrase: str, expected: str) -> None:
    assert normal_predicate(phrase) == expected
