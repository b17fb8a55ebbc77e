import pytest

from agrag.components.extractors.verb_phrases import MAX_PREDICATE_WORDS, Predicate, predicate_of, verb_phrase


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (("owns",), Predicate("owns", subject_first=True)),
        (("reported", "to"), Predicate("reports to", subject_first=True)),
        (("took", "over", "from"), Predicate("takes over from", subject_first=True)),
        (("agreed", "to", "buy"), Predicate("agrees to buy", subject_first=True)),
        (("gave", "a", "talk", "at"), Predicate("gives talk at", subject_first=True)),
        (("will", "become"), Predicate("becomes", subject_first=True)),
        (("is", "owned", "by"), Predicate("owns", subject_first=False)),
        (("was", "owned", "and", "run", "by"), Predicate("owns", subject_first=False)),
        (("is", "a", "member", "of"), Predicate("member of", subject_first=True)),
        (("has", "been", "mate", "on"), Predicate("mate on", subject_first=True)),
        (("known", "as"), Predicate("known as", subject_first=True)),
        (("is", "managing"), Predicate("manages", subject_first=True)),
    ],
)
def test_the_words_between_two_names_read_as_a_predicate(words: tuple[str, ...], expected: Predicate) -> None:
    assert verb_phrase(words, relative=False) == expected


@pytest.mark.parametrize(
    "words",
    [
        ("engineer",),  # a bare word after a name is a noun more often than a verb
        ("is",),  # a bare copula
        ("for", "the", "plan", "in"),
        ("gave", "a", "long", "talk", "at"),  # two nouns: more than a predicate
        ("owns", "and", "runs"),
        ("is", "pressure", "mounted", "on"),
    ],
)
def test_words_that_are_no_predicate_give_none(words: tuple[str, ...]) -> None:
    assert verb_phrase(words, relative=False) is None


def test_a_relative_pronoun_makes_a_bare_word_a_verb() -> None:
    assert verb_phrase(("lead",), relative=True) == Predicate("leads", subject_first=True)


def test_no_predicate_is_longer_than_the_limit() -> None:
    assert verb_phrase(("went", "back", "over", "to", "see"), relative=False) is None
    assert MAX_PREDICATE_WORDS == 4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("was published by", Predicate("published", subject_first=False)),
        ("PUBLISHED_BY", Predicate("published", subject_first=False)),
        ("owned", Predicate("owns", subject_first=True)),
        ("works at", Predicate("works at", subject_first=True)),
        ("WORKS_AT", Predicate("works at", subject_first=True)),
        ("is a member of", Predicate("member of", subject_first=True)),
        ("CEO of", Predicate("ceo of", subject_first=True)),
        ("capital of", Predicate("capital of", subject_first=True)),
        ("  ", None),
    ],
)
def test_a_predicate_written_elsewhere_takes_the_form_the_rules_write(text: str, expected: Predicate | None) -> None:
    assert predicate_of(text) == expected


def test_a_predicate_of_adverbs_only_is_written_as_it_stands() -> None:
    from agrag.components.extractors.verb_phrases import written_predicate

    # HippoRAG's MuSiQue triples hold a few such predicates; they once stopped an ingestion with an IndexError
    assert verb_phrase((), relative=False) is None
    assert written_predicate("also") == Predicate("also", subject_first=True)
    assert written_predicate("later ") == Predicate("later", subject_first=True)
