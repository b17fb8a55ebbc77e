"""``CitationChecker``: checks the evidence ids a draft answer cites, and its figures and names, without an LLM."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from agrag.components.data_models.citations import CitationCheck, InvalidCitation, InvalidReason, UnsupportedClaim
from agrag.components.data_models.evidence import FetchedEvidence
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.errors import EvidenceError

_MARKER = re.compile(r"\[([^\[\]\n]*)\]")
_SEPARATOR = re.compile(r"[,;\s]+")
# A sentence ends at . ! or ? (and any closing quote), taking the markers right behind it, or at a line break.
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)]*(?:[ \t]*\[[^\[\]\n]*\])*(?=\s|$)|\n")
_REFERENCE = re.compile(r"\[[\d\s,;–-]*\]")  # "[1]", "[1, 4]", "[1-3]": another citation style, not figures
_LIST_ITEM = re.compile(r"^\s*(?:#+|[-*•>]|\d+[.)])\s+")
# Digits glued to a letter or a dot ("v2", the "11" of "3.11") are not a figure of their own.
_NUMBER = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_LETTERS = re.compile(r"[^\W\d_]+")
MIN_NAME_LETTERS = 3  # "Ann" must be found, "of" or "AI" need not
OPENERS = frozenset(
    """a about according accordingly additionally after all also although an and another any as at based because
    before both but by currently despite during each earlier either eventually every finally first for from further
    furthermore given hence here however if in including initially instead it its later like many meanwhile moreover
    most much my neither nevertheless no none nor not now of on once one only or originally other our overall per
    previously recently second several she since so some specifically still such that the their then there therefore
    these they this those though thus to today together tomorrow under unlike until we what when where whereas which
    while who why with within without yes yesterday yet you your he his her i how""".split()
)
_SOURCE = (
    r"(?:knowledge\s+base|graph|evidence|sources?|passages?|documents?|documentation|context|corpus|excerpts?|chunks?"
    r"|search(?:es)?|look-?ups?|retrieved\s+\w+|fetched\s+\w+)"
)
# Sentences about what the graph or the evidence lacks, or about a failed lookup; not negative claims about the world.
_ABOUT_MISSING_EVIDENCE = re.compile(
    rf"\b{_SOURCE}\b[^,;:.]{{0,30}}?\b(?:(?:do|does|did|could|can|would|will)(?:\s+not|n't|not)"
    rf"|lacks?|(?:contains?|has|have|holds?|gives?|returned|found)\s+no|(?:says?|mentions?|contains?)\s+nothing)\b"
    rf"|\b(?:no|none\s+of\s+the|nothing\s+in\s+the|neither)\s+(?:\w+\s+)?{_SOURCE}\b"
    rf"|\bnot\s+(?:\w+\s+)?(?:mentioned|stated|found|given|covered|specified|listed|recorded|described|named|present"
    rf"|available|included)\s+(?:in|by)\s+(?:\w+\s+)?{_SOURCE}\b"
    r"|\b(?:i|we)\s+(?:could\s+not|couldn't|cannot|can't|was\s+unable\s+to|were\s+unable\s+to)\s+"
    r"(?:find|locate|confirm|verify|determine|retrieve)\b"
    r"|\b(?:i|we)\s+found\s+(?:no|nothing)\b"
    r"|\bno\s+(?:information|mention|record|details?)\s+(?:about|of|on|for|regarding|was|is)\b",
    re.IGNORECASE,
)


class CitationChecker:
    """Checks a draft answer's ``[evidence id]`` citations against the evidence a session fetched.

    A marker is a pair of square brackets holding evidence ids separated by commas, semicolons or spaces
    (``[d1.3b9f0c1d2e4a.c2]``, ``[id1, id2]``). Brackets holding nothing that looks like an id (no token with two
    dots, as in ``[sic]`` or ``[1]``) are ordinary text. An id is valid when it was fetched and is in scope; scope
    wins, so an id outside it is ``out_of_scope`` even if it was read before. Invalid ids are removed from the answer.

    The literal claim checks are warnings that never change ``grounded``: a figure (``2.80`` matches ``2.8``,
    ``1,200`` matches ``1200``) must appear as a number in the text, title or headings of the evidence its sentence
    cites, and each word of three or more letters of a name (a run of capitalised words) must appear there as a whole
    word, ignoring case. A sentence's first word counts as a name only when it starts a run of several words or the
    sentence names something else, and never when it is a common opener ("The", "However"). Sentences saying the
    graph or the evidence lacks something need no citation.

    Usage example:
        ```python
        check = CitationChecker().check(f"Maria Chen wrote it in 2023 [{item.id}].", {item.id: item}, lambda _: True)
        check.grounded  # True
        check.cited  # (item.id,)
        check.unsupported  # () when the passage names Maria Chen and 2023
        ```
    """

    def check(
        self, answer: str, fetched: Mapping[str, FetchedEvidence], in_scope: Callable[[str], bool]
    ) -> CitationCheck:
        """Check ``answer`` against ``fetched`` (canonical id -> evidence) within ``in_scope`` (canonical id -> bool).

        Returns:
            The answer with invalid ids removed, the valid and invalid ids, and the claim-check warnings.
        """
        draft = _Draft(fetched, in_scope)
        cleaned = draft.clean(answer)
        uncited: list[str] = []
        unsupported: list[UnsupportedClaim] = []
        supports: dict[str, _Support] = {}
        for sentence in _sentences(cleaned):
            cited = tuple(dict.fromkeys(i for tokens in _citations(sentence) for i in tokens if i in draft.cited))
            claim = _claim_text(sentence)
            if _ABOUT_MISSING_EVIDENCE.search(claim):
                continue
            figures, names = _figures(claim), _names(claim)
            if not cited:
                if figures or names:
                    uncited.append(sentence)
                continue
            for i in cited:
                if i not in supports:
                    supports[i] = _Support.of_one(fetched[i])
            support = _Support.of([supports[i] for i in cited])
            missing_figures = tuple(f for f in figures if _figure_value(f) not in support.figures)
            missing_names = tuple(n for n in names if not support.has_name(n))
            if missing_figures or missing_names:
                unsupported.append(UnsupportedClaim(sentence, cited, missing_figures, missing_names))
        valid = tuple(draft.cited)
        return CitationCheck(
            cleaned, valid, tuple(draft.invalid), tuple(uncited), tuple(unsupported), bool(valid) and not draft.invalid
        )


@dataclass
class _Draft:
    """Rebuilds an answer marker by marker, keeping valid ids and recording the invalid ones."""

    fetched: Mapping[str, FetchedEvidence]
    in_scope: Callable[[str], bool]
    cited: dict[str, None] = field(default_factory=dict)  # an ordered set
    invalid: list[InvalidCitation] = field(default_factory=list)
    _parts: list[str] = field(default_factory=list, init=False)
    _skip_space: bool = field(default=False, init=False)

    def clean(self, answer: str) -> str:
        position = 0
        for match in _MARKER.finditer(answer):
            self._text(answer[position : match.start()])
            position = match.end()
            tokens = _marker_tokens(match[1])
            kept = None if tokens is None else [i for i in dict.fromkeys(map(self._valid, tokens)) if i]
            if kept is None:
                self._text(match[0])
            elif kept:
                self._text(f"[{', '.join(kept)}]")
            else:
                self._remove_marker()
        self._text(answer[position:])
        return "".join(self._parts)

    def _valid(self, token: str) -> str | None:
        """The canonical id when ``token`` is a valid citation; else None, and why is recorded."""
        try:
            canonical = str(EvidenceId.parse(token))
        except EvidenceError:
            self._invalid(token, InvalidReason.MALFORMED)
            return None
        if not self.in_scope(canonical):
            self._invalid(canonical, InvalidReason.OUT_OF_SCOPE)
            return None
        if canonical not in self.fetched:
            self._invalid(canonical, InvalidReason.NOT_FETCHED)
            return None
        self.cited.setdefault(canonical)
        return canonical

    def _invalid(self, evidence_id: str, reason: InvalidReason) -> None:
        found = InvalidCitation(evidence_id, reason)
        if found not in self.invalid:
            self.invalid.append(found)

    def _text(self, text: str) -> None:
        if self._skip_space:
            text = text.lstrip(" \t")
        if text:
            self._parts.append(text)
            self._skip_space = False

    def _remove_marker(self) -> None:
        # "A [bad]." becomes "A."; a marker that opened a line takes the space after it instead.
        before = "".join(self._parts).rstrip(" \t")
        self._parts = [before]
        self._skip_space = not before or before.endswith("\n")


@dataclass(frozen=True)
class _Support:
    """The numbers and words of the evidence one sentence cites."""

    figures: frozenset[str]
    words: frozenset[str]

    @classmethod
    def of_one(cls, evidence: FetchedEvidence) -> _Support:
        # The title and headings are shown with the passage, so a name taken from them is supported.
        text = "\n".join((evidence.location.title, *evidence.location.heading_path, evidence.text))
        figures = frozenset(_figure_value(f) for f in _NUMBER.findall(text))
        return cls(figures, frozenset(w.casefold() for w in _LETTERS.findall(text)))

    @classmethod
    def of(cls, parts: list[_Support]) -> _Support:
        return cls(frozenset().union(*(p.figures for p in parts)), frozenset().union(*(p.words for p in parts)))

    def has_name(self, name: str) -> bool:
        return all(w.casefold() in self.words for w in _LETTERS.findall(name) if len(w) >= MIN_NAME_LETTERS)


def _marker_tokens(body: str) -> list[str] | None:
    """The tokens of a citation marker, or None for brackets that hold no id-like token."""
    tokens = [t.strip(".") for t in _SEPARATOR.split(body) if t and t.casefold() != "and"]
    return tokens if any(t.count(".") >= 2 for t in tokens) else None


def _citations(sentence: str) -> Iterator[list[str]]:
    for match in _MARKER.finditer(sentence):
        tokens = _marker_tokens(match[1])
        if tokens is not None:
            yield tokens


def _sentences(text: str) -> Iterator[str]:
    start = 0
    for end in _SENTENCE_END.finditer(text):
        if sentence := text[start : end.end()].strip():
            yield sentence
        start = end.end()
    if sentence := text[start:].strip():
        yield sentence


def _claim_text(sentence: str) -> str:
    """The sentence without its citation markers, numbered references and list or heading marks."""
    text = _MARKER.sub(lambda m: "" if _marker_tokens(m[1]) is not None else m[0], sentence)
    return _LIST_ITEM.sub("", _REFERENCE.sub("", text))


def _figures(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_NUMBER.findall(text)))


def _figure_value(written: str) -> str:
    """A figure's value as text: no thousands separators, no leading or trailing zeros ("2.80" -> "2.8")."""
    whole, _, fraction = written.replace(",", "").partition(".")
    whole, fraction = whole.lstrip("0") or "0", fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def _names(text: str) -> tuple[str, ...]:
    """The runs of capitalised words with a word of three or more letters, by the first-word rules."""
    runs = _capital_runs(text)
    first = _WORD.search(text)
    lone_first = False
    if runs and first is not None and runs[0][0] == first.start():
        start, words = runs[0]
        if words[0].casefold() in OPENERS:
            runs[0] = (start, words[1:])
        else:
            lone_first = len(words) == 1
    names = [(i, " ".join(words)) for i, (_, words) in enumerate(runs) if _significant(words)]
    if lone_first and [i for i, _ in names] == [0]:
        return ()  # a lone capitalised first word in a sentence that names nothing else is just its first word
    return tuple(dict.fromkeys(name for _, name in names))


def _capital_runs(text: str) -> list[tuple[int, list[str]]]:
    """Each run of capitalised words separated by white space only, with where it starts."""
    runs: list[tuple[int, list[str]]] = []
    previous_end = -1
    for word in _WORD.finditer(text):
        if not word[0][0].isupper():
            previous_end = -1
        elif runs and previous_end >= 0 and text[previous_end : word.start()].isspace():
            runs[-1][1].append(word[0])
            previous_end = word.end()
        else:
            runs.append((word.start(), [word[0]]))
            previous_end = word.end()
    return runs


def _significant(words: list[str]) -> bool:
    return any(len(w) >= MIN_NAME_LETTERS for word in words for w in _LETTERS.findall(word))
