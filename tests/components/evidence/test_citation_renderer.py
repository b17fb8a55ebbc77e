import pytest

from agrag.components.data_models.citations import Source
from agrag.components.data_models.evidence import EvidenceLocation, FetchedEvidence
from agrag.components.errors import EvidenceError
from agrag.components.evidence.citation_checker import CitationChecker
from agrag.components.evidence.citation_renderer import CitationRenderer

DOC, VERSION, OLD = "d1f3a9c2b4e5d6f", "3b9f0c1d2e4a", "9c8d7e6f5a4b"
HISTORY, DESIGN, SUPERSEDED, UNREAD = (
    f"{DOC}.{VERSION}.c2",
    f"{DOC}.{VERSION}.c5",
    f"{DOC}.{OLD}.s0-90",
    f"{DOC}.{VERSION}.c9",
)
TITLE = "Orion Planner Design Notes"


def evidence(evidence_id: str, heading: str, current: bool = True) -> FetchedEvidence:
    location = EvidenceLocation(TITLE, (TITLE, heading), 0, 10)
    return FetchedEvidence(evidence_id, "Maria Chen wrote it.", location, current)


FETCHED = {
    HISTORY: evidence(HISTORY, "History and Authorship"),
    DESIGN: evidence(DESIGN, "Design"),
    SUPERSEDED: evidence(SUPERSEDED, "Overview", current=False),
}


def render(answer: str) -> tuple[str, tuple[Source, ...]]:
    check = CitationChecker().check(answer, FETCHED, lambda _: True)
    rendered = CitationRenderer().render(check, FETCHED)
    return rendered.text, rendered.sources


def test_ids_are_numbered_in_first_cited_order_and_reuse_their_number() -> None:
    text, sources = render(f"Maria Chen wrote it [{DESIGN}]. She leads it [{HISTORY}, {DESIGN}]. Still [{DESIGN}].")
    assert text.startswith("Maria Chen wrote it [1]. She leads it [1, 2]. Still [1].\n\nSources:\n")
    assert [(s.number, s.id) for s in sources] == [(1, DESIGN), (2, HISTORY)]


def test_the_sources_block_lists_title_headings_and_version_and_marks_superseded_ones() -> None:
    text, sources = render(f"Maria Chen wrote it [{HISTORY}]. It began in Lyon [{SUPERSEDED}].")
    assert text.endswith(
        "Sources:\n"
        f"[1] {TITLE} > History and Authorship (version {VERSION})\n"
        f"[2] {TITLE} > Overview (version {OLD}) (superseded)"
    )
    assert sources[1] == Source(2, SUPERSEDED, TITLE, (TITLE, "Overview"), OLD, False)


def test_invalid_citations_and_other_brackets_are_not_numbered() -> None:
    text, sources = render(f"Maria Chen [sic] wrote it [{UNREAD}, {HISTORY}]. See [1] too [{UNREAD}].")
    assert text.splitlines()[0] == "Maria Chen [sic] wrote it [1]. See [1] too."
    assert [s.id for s in sources] == [HISTORY]


def test_an_answer_citing_nothing_has_no_sources_block() -> None:
    text, sources = render("The evidence does not say who wrote it.")
    assert text == "The evidence does not say who wrote it." and sources == ()


def test_a_cited_id_missing_from_the_fetched_evidence_is_an_error() -> None:
    check = CitationChecker().check(f"Maria Chen wrote it [{HISTORY}].", FETCHED, lambda _: True)
    with pytest.raises(EvidenceError, match="not among the fetched evidence"):
        CitationRenderer().render(check, {})
