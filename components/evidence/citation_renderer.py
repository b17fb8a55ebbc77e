"""``CitationRenderer``: numbers the valid citations of a checked answer and lists their sources."""

from __future__ import annotations

import re
from collections.abc import Mapping

from agrag.components.data_models.citations import CitationCheck, RenderedAnswer, Source
from agrag.components.data_models.evidence import FetchedEvidence
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.errors import EvidenceError

_MARKER = re.compile(r"\[([^\[\]\n]*)\]")
_SEPARATOR = re.compile(r"[,;\s]+")


class CitationRenderer:
    """Turns the id markers of a ``CitationCheck`` into numbered references with a Sources list.

    Ids are numbered in first-cited order and an id cited twice keeps its number; a marker citing several ids
    becomes ``[1, 3]``. Only the check's answer is rendered, so invalid citations are already gone. Each source line
    gives the document title, the headings above the passage, the version the id names and, for a version that has
    been replaced since, "(superseded)".

    Usage example:
        ```python
        check = CitationChecker().check(draft, session.fetched, in_scope)
        rendered = CitationRenderer().render(check, session.fetched)
        print(rendered.text)
        # Maria Chen wrote the Orion Planner in 2023 [1].
        #
        # Sources:
        # [1] Orion Planner Design Notes > History and Authorship (version 3b9f0c1d2e4a)
        ```
    """

    def render(self, check: CitationCheck, fetched: Mapping[str, FetchedEvidence]) -> RenderedAnswer:
        """Number the citations of ``check.answer`` and end it with a "Sources:" block (none when nothing is cited).

        Raises:
            EvidenceError: when a cited id is missing from ``fetched`` (the check was made against other evidence).
        """
        numbers = {evidence_id: number for number, evidence_id in enumerate(check.cited, start=1)}
        sources = tuple(_source(number, evidence_id, fetched) for evidence_id, number in numbers.items())
        text = _MARKER.sub(lambda match: _numbered(match, numbers), check.answer)
        if sources:
            text = text.rstrip() + "\n\nSources:\n" + "\n".join(map(_line, sources))
        return RenderedAnswer(text, sources)


def _numbered(match: re.Match[str], numbers: Mapping[str, int]) -> str:
    tokens = [t for t in _SEPARATOR.split(match[1]) if t]
    if not tokens or any(t not in numbers for t in tokens):
        return match[0]  # not a citation: "[sic]", "[1]"
    return "[" + ", ".join(str(n) for n in sorted({numbers[t] for t in tokens})) + "]"


def _source(number: int, evidence_id: str, fetched: Mapping[str, FetchedEvidence]) -> Source:
    evidence = fetched.get(evidence_id)
    if evidence is None:
        raise EvidenceError(
            f"{evidence_id!r} is cited but not among the fetched evidence; render a check made against the same "
            "session's fetched evidence."
        )
    location = evidence.location
    version = EvidenceId.parse(evidence_id).version
    return Source(number, evidence_id, location.title, location.heading_path, version, evidence.current)


def _line(source: Source) -> str:
    headings = source.heading_path
    if headings and headings[0] == source.title:
        headings = headings[1:]  # Markdown heading paths start with the document title
    where = " > ".join(part for part in (source.title, *headings) if part) or source.id
    superseded = "" if source.current else " (superseded)"
    return f"[{source.number}] {where} (version {source.version}){superseded}"
