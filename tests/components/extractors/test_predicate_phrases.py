import pytest

from agrag.components.extractors.predicate_phrases import predicate_between
from agrag.components.extractors.verb_phrases import MAX_PREDICATE_WORDS, Predicate


def span(sentence: str, name: str) -> tuple[int, int]:
    """Where ``name`` sits in ``sentence``, a possessive ``'s`` after it included (as the extractor gives it)."""
    start = sentence.index(name)
    end = start + len(name)
    return (start, end + 2) if sentence[end : end + 2] in ("'s", "’s") else (start, end)


def fact(sentence: str, first: str, second: str, *others: str) -> tuple[str, str, str] | None:
    """(subject, predicate, object) the sentence states between two names, or None."""
    a, b = span(sentence, first), span(sentence, second)
    left, right = sorted((a, b))
    found = predicate_between(sentence, left, right, [span(sentence, o) for o in others])
    if found is None:
        return None
    earlier, later = (first, second) if a < b else (second, first)
    return (earlier, found.phrase, later) if found.subject_first else (later, found.phrase, earlier)


@pytest.mark.parametrize(
    ("sentence", "first", "second", "expected"),
    [
        ("Victor Hale owns Osprey Ceramics.", "Victor Hale", "Osprey Ceramics", "owns"),
        ("Dr. Gallagher manages the Sequencing Facility.", "Gallagher", "Sequencing Facility", "manages"),
        ("Kirsty studied at the University of Leeds.", "Kirsty", "University of Leeds", "studied at"),
        ("Halyard Marine supplies the CT-60.", "Halyard Marine", "CT-60", "supplies"),
        ("Lukas reports to Tessa Oyelaran.", "Lukas", "Tessa Oyelaran", "reports to"),
        ("Tom Reyes works for Halyard Marine.", "Tom Reyes", "Halyard Marine", "works for"),
        ("Victor Hale took over from Anna Berg.", "Victor Hale", "Anna Berg", "takes over from"),
        ("Victor Hale agreed to buy Osprey Ceramics.", "Victor Hale", "Osprey Ceramics", "agrees to buy"),
        ("Kirsty gave a talk at Brinemark Bio.", "Kirsty", "Brinemark Bio", "gives talk at"),
        ("Moira Cathcart will become Director of the Station.", "Moira Cathcart", "Director", "becomes"),
    ],
)
def test_a_verb_between_two_names_is_the_predicate_from_the_first(
    sentence: str, first: str, second: str, expected: str
) -> None:
    assert fact(sentence, first, second) == (first, expected, second)


def test_a_passive_is_turned_active_with_its_agent_as_subject() -> None:
    sentence = "Osprey Ceramics is owned by Victor Hale."
    assert fact(sentence, "Osprey Ceramics", "Victor Hale") == ("Victor Hale", "owns", "Osprey Ceramics")
    assert predicate_between(sentence, span(sentence, "Osprey Ceramics"), span(sentence, "Victor Hale")) == (
        Predicate("owns", subject_first=False)
    )
    both = "Kelpworks Engineering is owned and run by Rab Cowie."
    assert fact(both, "Kelpworks Engineering", "Rab Cowie") == ("Rab Cowie", "owns", "Kelpworks Engineering")
    reduced = "Osprey Ceramics, owned by Victor Hale, makes cups."
    assert fact(reduced, "Osprey Ceramics", "Victor Hale") == ("Victor Hale", "owns", "Osprey Ceramics")


def test_a_role_after_the_object_joins_the_predicate_in_both_voices() -> None:
    active = "Fiona Baird replaced Moira Cathcart as director."
    passive = "Moira Cathcart was replaced by Fiona Baird as director."
    expected = ("Fiona Baird", "replaced ... as director", "Moira Cathcart")
    assert fact(active, "Fiona Baird", "Moira Cathcart") == expected
    assert fact(passive, "Moira Cathcart", "Fiona Baird") == expected


@pytest.mark.parametrize(
    ("sentence", "first", "second", "expected"),
    [
        # appositions, possessives and the short links of a noun phrase
        ("Moira Cathcart, the director of Gannet Bay, called.", "Moira Cathcart", "Gannet Bay", "director of"),
        ("Halyard's engineer Tom Reyes came.", "Tom Reyes", "Halyard", "engineer of"),
        ("Tom Reyes, Halyard's engineer, came.", "Tom Reyes", "Halyard", "engineer of"),
        ("Victor Hale is Osprey's owner.", "Victor Hale", "Osprey", "owner of"),
        ("Marchetti, who leads IOB's plankton team, came.", "Marchetti", "IOB", "leads team of"),
        (
            "Welcome to Gannet Bay, Northwold University's field station.",
            "Gannet Bay",
            "Northwold University",
            "station of",
        ),
        ("Tom Reyes of Halyard Marine came.", "Tom Reyes", "Halyard Marine", "of"),
        ("The lab hired Tom Reyes at Halyard Marine.", "Tom Reyes", "Halyard Marine", None),
        ("It is easier to administer India from Delhi.", "India", "Delhi", None),
        ("Kirsty Munro at Brinemark Bio replied.", "Kirsty Munro", "Brinemark Bio", "at"),
        ("Katrin Vogel, from Brinemark Bio, came.", "Katrin Vogel", "Brinemark Bio", "from"),
        ("Kirsty Munro is a member of the Plankton Group.", "Kirsty Munro", "Plankton Group", "member of"),
        ("Rekha Bose is based at Gannet Bay.", "Rekha Bose", "Gannet Bay", "based at"),
        ("The Bartles Campus located off Bartles Road is new.", "Bartles Campus", "Bartles Road", "located off"),
        (
            "The Royal Institution, later known as the Polytechnic, grew.",
            "Royal Institution",
            "Polytechnic",
            "known as",
        ),
    ],
)
def test_noun_phrase_patterns_name_the_link(sentence: str, first: str, second: str, expected: str | None) -> None:
    assert fact(sentence, first, second) == ((first, expected, second) if expected else None)


@pytest.mark.parametrize(
    ("sentence", "first", "second", "others"),
    [
        ("Victor Hale owns Osprey; Krill-9 ships daily.", "Victor Hale", "Krill-9", ()),  # a clause break
        ("Victor Hale owns Osprey: Krill-9 ships daily.", "Victor Hale", "Krill-9", ()),
        ("Victor Hale left — Anna Berg took over.", "Victor Hale", "Anna Berg", ()),
        ("Victor Hale left and Anna Berg took over.", "Victor Hale", "Anna Berg", ()),  # a conjunction's new clause
        ("After Victor Hale left, Anna Berg took over.", "Victor Hale", "Anna Berg", ()),
        ("Anna, Lukas and Kirsty attended.", "Anna", "Lukas", ()),  # lists
        ("Anna, Lukas and Kirsty attended.", "Lukas", "Kirsty", ()),
        ("Anna, Lukas and Kirsty attended.", "Anna", "Kirsty", ("Lukas",)),
        ("Victor Hale sold Osprey Ceramics to Krill.", "Victor Hale", "Krill", ("Osprey Ceramics",)),  # a third name
        ("Alasdair is not related to Kirsty Munro.", "Alasdair", "Kirsty Munro", ()),  # negation and hedges
        ("Victor Hale doesn't own Osprey Ceramics.", "Victor Hale", "Osprey Ceramics", ()),
        ("Victor Hale might buy Osprey Ceramics.", "Victor Hale", "Osprey Ceramics", ()),
        ("Victor Hale is Anna Berg.", "Victor Hale", "Anna Berg", ()),  # a bare copula says nothing here
        ("Victor Hale, Anna Berg.", "Victor Hale", "Anna Berg", ()),
        ("The Halyard engineer supplied Osprey.", "Halyard", "Osprey", ()),  # a name that modifies a noun
        ("The Shearwater carries a Halyard CT-60 profiler.", "Shearwater", "Halyard CT-60", ()),
        ("Samples from Skerrin were deposited in NODA.", "Skerrin", "NODA", ()),  # no subject
        ("Tom said Osprey owns Krill.", "Tom", "Osprey", ()),  # the object opens a clause of its own
        ('The song "Creatures of the Night" was a hit.', "Creatures", "Night", ()),  # inside a title
        ("Friends in Low Places", "Friends", "Low Places", ()),
        ("Victor Hale met the board in 2019 at Osprey Ceramics.", "Victor Hale", "Osprey Ceramics", ()),
        ("Popular in South East Asia, such as Singapore.", "South East Asia", "Singapore", ()),
        ("It holds Prague's oldest Rotunda of St Martin.", "Prague", "Rotunda of St Martin", ()),
        ("Maessen of Buurmalsen, Netherlands, who had come to North America.", "Netherlands", "North America", ()),
        ("Native Lithuanian speakers in Lithuania are many.", "Lithuanian", "Lithuania", ()),
        ("The Consulate of the United States in Shanghai opened.", "United States", "Shanghai", ()),
        ("Historic Places listings in Henry County grew.", "Historic Places", "Henry County", ()),
        ("Victor Hale, who spent years abroad working on many ships, joined Osprey.", "Victor Hale", "Osprey", ()),
    ],
)
def test_no_fact_where_the_words_between_are_no_predicate(
    sentence: str, first: str, second: str, others: tuple[str, ...]
) -> None:
    assert fact(sentence, first, second, *others) is None


def test_a_predicate_is_short() -> None:
    sentence = "Victor Hale went back over to see Anna Berg."
    found = predicate_between(sentence, span(sentence, "Victor Hale"), span(sentence, "Anna Berg"))
    assert found is None or len(found.phrase.split()) <= MAX_PREDICATE_WORDS


def test_mentions_out_of_order_or_overlapping_give_nothing() -> None:
    sentence = "Victor Hale owns Osprey Ceramics."
    assert predicate_between(sentence, span(sentence, "Osprey Ceramics"), span(sentence, "Victor Hale")) is None
