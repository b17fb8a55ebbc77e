import pytest

from agrag.components.data_models.citations import CitationCheck, InvalidCitation, InvalidReason
from agrag.components.data_models.evidence import EvidenceLocation, FetchedEvidence
from agrag.components.evidence.citation_checker import CitationChecker

DOC, OTHER, VERSION = "d1f3a9c2b4e5d6f", "a7e2c9", "3b9f0c1d2e4a"
HISTORY, DESIGN, UNREAD = f"{DOC}.{VERSION}.c2", f"{DOC}.{VERSION}.s120-480", f"{DOC}.{VERSION}.c9"
HIDDEN = f"{OTHER}.{VERSION}.c0"


def evidence(evidence_id: str, text: str, heading: str = "History and Authorship") -> FetchedEvidence:
    title = "Orion Planner Design Notes"
    return FetchedEvidence(evidence_id, text, EvidenceLocation(title, (title, heading), 0, len(text)), True)


FETCHED = {
    HISTORY: evidence(
        HISTORY,
        "Maria Chen wrote the Orion Planner in 2023. The old planner could not handle more than 40 robots; "
        "the new one moves them at 2.8 m/s across 1,200 aisle segments, a 35% gain.",
    ),
    DESIGN: evidence(DESIGN, "Tomas Eriksen helped define the obstacle map format.", "Design"),
    HIDDEN: evidence(HIDDEN, "Globex acquired Initech."),
}


def check(answer: str, in_scope: tuple[str, ...] = (DOC,)) -> CitationCheck:
    return CitationChecker().check(answer, FETCHED, lambda evidence_id: evidence_id.split(".")[0] in in_scope)


def test_a_fetched_id_in_scope_is_a_valid_citation_and_grounds_the_answer() -> None:
    result = check(f"Maria Chen wrote the Orion Planner in 2023 [{HISTORY}].")
    assert result.grounded and result.cited == (HISTORY,)
    assert result.invalid == () and result.uncited == () and result.unsupported == ()
    assert result.answer == f"Maria Chen wrote the Orion Planner in 2023 [{HISTORY}]."


def test_cited_ids_are_listed_once_in_first_cited_order() -> None:
    result = check(f"Tomas Eriksen helped [{DESIGN}]. Maria Chen wrote it [{HISTORY}, {DESIGN}; {HISTORY}].")
    assert result.cited == (DESIGN, HISTORY)
    assert result.answer.endswith(f"[{HISTORY}, {DESIGN}].")


def test_an_id_never_fetched_is_not_fetched() -> None:
    result = check(f"Maria Chen wrote it [{UNREAD}].")
    assert result.invalid == (InvalidCitation(UNREAD, InvalidReason.NOT_FETCHED),)
    assert not result.grounded and result.cited == ()


def test_scope_wins_over_an_earlier_fetch() -> None:
    result = check(f"Globex acquired Initech [{HIDDEN}].")
    assert result.invalid == (InvalidCitation(HIDDEN, InvalidReason.OUT_OF_SCOPE),)
    assert not result.grounded
    assert check(f"Globex acquired Initech [{HIDDEN}].", in_scope=(DOC, OTHER)).grounded


def test_an_id_like_token_that_does_not_parse_is_malformed() -> None:
    result = check(f"Maria Chen wrote it [{HISTORY}, {DOC}.XYZ.c2].")
    assert result.invalid == (InvalidCitation(f"{DOC}.XYZ.c2", InvalidReason.MALFORMED),)
    assert result.answer == f"Maria Chen wrote it [{HISTORY}]."


@pytest.mark.parametrize("bracket", ["[sic]", "[1]", "[1, 4]", "[note]"])
def test_brackets_without_id_like_tokens_are_not_citations(bracket: str) -> None:
    answer = f"Maria Chen wrote the planner {bracket} in 2023 [{HISTORY}]."
    result = check(answer)
    assert result.answer == answer and result.invalid == () and result.grounded
    assert result.unsupported == ()


def test_invalid_ids_are_removed_and_the_text_is_tidied() -> None:
    result = check(
        f"[{UNREAD}] Maria Chen wrote it [{HISTORY}; {UNREAD}]. Tomas Eriksen helped [{HIDDEN}] [x.y.z].\n"
        f"[{UNREAD}] It ships.[{HIDDEN}]"
    )
    assert result.answer == f"Maria Chen wrote it [{HISTORY}]. Tomas Eriksen helped.\nIt ships."
    assert [i.reason for i in result.invalid] == ["not_fetched", "out_of_scope", "malformed"]


def test_an_answer_without_valid_citations_is_not_grounded() -> None:
    assert not check("Maria Chen wrote the Orion Planner.").grounded
    assert not check("The evidence does not say who wrote it.").grounded
    assert not check(f"Maria Chen wrote it [{HISTORY}]. Tomas Eriksen helped [{UNREAD}].").grounded


def test_a_figure_must_appear_as_a_number_in_the_cited_evidence() -> None:
    result = check(f"The old planner handled 4 robots [{HISTORY}].")
    (claim,) = result.unsupported
    assert claim.missing_figures == ("4",) and claim.missing_names == () and claim.cited == (HISTORY,)
    assert result.grounded  # the claim checks are warnings only


def test_trailing_zeros_thousands_separators_and_percentages_match() -> None:
    result = check(f"It moves robots at 2.80 m/s over 1200 segments, 35.0% better, since 2023 [{HISTORY}].")
    assert result.unsupported == ()


def test_a_figure_is_checked_against_the_evidence_its_own_sentence_cites() -> None:
    result = check(f"Maria Chen wrote it [{HISTORY}]. Tomas Eriksen helped in 2023 [{DESIGN}].")
    (claim,) = result.unsupported
    assert claim.sentence == f"Tomas Eriksen helped in 2023 [{DESIGN}]." and claim.missing_figures == ("2023",)


def test_a_marker_right_after_the_final_period_belongs_to_its_sentence() -> None:
    result = check(f"It handled 4 robots.[{HISTORY}] Tomas Eriksen helped. [{DESIGN}]")
    assert [c.missing_figures for c in result.unsupported] == [("4",)]
    assert result.uncited == ()


def test_a_name_needs_each_word_of_three_or_more_letters_in_the_evidence() -> None:
    result = check(f"Maria Chen and Ann Lee wrote the Orion Planner [{HISTORY}].")
    (claim,) = result.unsupported
    assert claim.missing_names == ("Ann Lee",)  # "Ann" is not found in "planner"


def test_a_name_is_found_across_words_of_the_evidence_ignoring_case() -> None:
    # "Orion" and "Planner" sit apart in the passage, and "Design Notes" only in its title.
    result = check(f"Maria wrote the Planner Orion for the DESIGN NOTES team [{HISTORY}].")
    assert result.unsupported == ()


def test_a_lone_surname_needs_support_like_any_name() -> None:
    (claim,) = check(f"Maria Chen wrote it with Eriksen [{HISTORY}].").unsupported
    assert claim.missing_names == ("Eriksen",)


def test_a_sentence_stating_a_name_without_citation_is_uncited() -> None:
    result = check(f"Maria Chen wrote it [{HISTORY}]. Later, Tomas Eriksen took over.")
    assert result.uncited == ("Later, Tomas Eriksen took over.",)


def test_a_sentence_stating_a_figure_without_citation_is_uncited() -> None:
    result = check(f"Maria Chen wrote it [{HISTORY}]. It handled 40 robots.")
    assert result.uncited == ("It handled 40 robots.",)


def test_sentences_about_missing_evidence_need_no_citation() -> None:
    answer = (
        f"Maria Chen wrote it [{HISTORY}]. The evidence does not say who founded Globex. "
        "No passage mentions the 2019 budget. I could not find Initech's address.\n"
        "Globex does not provide pensions to Initech staff."
    )
    assert check(answer).uncited == ("Globex does not provide pensions to Initech staff.",)


@pytest.mark.parametrize(
    ("sentence", "uncited"),
    [
        ("The planner is fast.", False),  # an opener is never a name
        ("However, it is fast.", False),
        ("Planning is fast.", False),  # a lone first word in a sentence that names nothing else
        ("Globex acquired Initech.", True),  # ...but counts when the sentence names something else
        ("Corvane Systems ships robots.", True),  # a first word that starts a run of names
        ("The Orion Planner is fast.", True),  # the run after an opener is a name
        ("In March the team moved.", True),
    ],
)
def test_the_first_word_of_a_sentence_counts_as_a_name_only_by_the_opener_rules(sentence: str, uncited: bool) -> None:
    assert check(sentence).uncited == ((sentence,) if uncited else ())


def test_a_first_word_naming_something_with_another_name_is_checked() -> None:
    (claim,) = check(f"Globex hired Maria Chen [{HISTORY}].").unsupported
    assert claim.missing_names == ("Globex",)
