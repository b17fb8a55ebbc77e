"""Predicate phrases by rule: what one sentence says joins two entity mentions, and which of them is the subject.

``predicate_between`` reads the words between two mentions (and a few around them) and returns a short, normalised
predicate (``owns``, ``studied at``, ``replaced ... as director``, ``engineer of``) with its direction, or None when
the words are no predicate it can trust: a clause break, a negation or hedge, another entity, a list, a pronoun or
more words than a predicate has. This module knows where the mentions sit (possessives, appositions, a name that
modifies a noun, a preposition before the subject, titles); ``verb_phrases`` reads the words between them.

No model and no parser: the rules read word shapes, small closed word lists and punctuation. They would rather say
nothing than say something wrong; a pair they pass over stays a co-occurrence (``RELATED_TO``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from agrag.components.extractors.verb_forms import is_inflected_verb, is_past_participle
from agrag.components.extractors.verb_phrases import (
    MAX_PREDICATE_WORDS,
    Predicate,
    joined,
    passive_verb,
    role_phrase,
    verb_phrase,
)
from agrag.components.extractors.word_classes import (
    BARE_PREPOSITIONS,
    COPULAS,
    DETERMINERS,
    FUNCTION_WORDS,
    GOES_ON,
    NO_FACT_WORDS,
    NOT_ROLES,
    PREPOSITIONS,
    RELATIVES,
    is_adverb,
    is_content_word,
)

_MAX_GAP_WORDS = 8
_MAX_GAP_CHARS = 80
_POSSESSIVE = ("'s", "’s")
_TOKEN = r"[^\W\d_][^\W\d_'’-]*(?:['’-][^\W\d_]+)*|\d+|\S"
_WORD = re.compile(_TOKEN)
_NEXT_WORD = re.compile(rf"\s*({_TOKEN})")

# What no gap holding a predicate has: a clause break, a number, a negation (``n't``).
_NO_GAP = re.compile(r"[;:—–()\[\]\"“”?!\d]|\s-\s|n['’]t\b")
_ROLE_END = re.compile(r"\s*(?:[.,;:)!?]|$)")
_QUOTES = frozenset("\"“”'‘’«»")


def _words_after(sentence: str, end: int) -> list[str]:
    return _WORD.findall(sentence[end : end + 60])


def _word_before(sentence: str, start: int) -> str:
    """The word or mark just before ``start``, past any determiners, lowercased ("" at the start)."""
    text = sentence[max(0, start - 40) : start]
    while True:  # by hand: a regex anchored at the end tries every start position, and this runs for every pair
        text = text.rstrip()
        if not text:
            return ""
        i = len(text) - 1
        if text[i].isalpha():
            while i > 0 and (text[i - 1].isalpha() or text[i - 1] in "'’-"):
                i -= 1
        elif text[i].isdigit():
            while i > 0 and text[i - 1].isdigit():
                i -= 1
        word = text[i:].casefold()
        if word not in DETERMINERS:
            return word
        text = text[:i]


def _next_word(sentence: str, end: int) -> str:
    """The word or mark just after ``end`` ("" at the end)."""
    found = _NEXT_WORD.match(sentence, end)
    return found.group(1) if found else ""


def _head_noun(sentence: str, end: int) -> str | None:
    """The head noun of a possessive's noun phrase: ``Halyard's lead engineer,`` -> ``engineer``."""
    words: list[str] = []
    for word in _words_after(sentence, end):
        if not word[:1].isalpha() or word in PREPOSITIONS:
            break
        if not word.islower() or not is_content_word(word) or is_past_participle(word):
            return None
        words.append(word)
    return words[-1] if 0 < len(words) <= 3 and words[-1] not in NOT_ROLES else None


def _object_is_modifier(sentence: str, end: int, *, verb: bool) -> bool:
    """True when the object mention modifies the noun after it (``owns the Osprey factory``), so it is no object.

    After a verb's object, a finite verb says the mention is the subject of a clause of its own (``said Osprey owns
    Krill``); after ``of`` or a role (``Tom Reyes of Halyard came``) it is the sentence going on.
    """
    word = _next_word(sentence, end)
    if word[:1].isdigit():
        return True  # ``in AD 41``, ``Osprey 2``: the mention is part of a date or a code
    if not word[:1].isalpha():
        return False
    if word in GOES_ON or is_adverb(word) or word.endswith("ed"):
        return False
    return verb or not is_inflected_verb(word)


def _complement(sentence: str, end: int) -> str:
    """`` as director`` after the object: the role a verb gives it (``replaced Moira as director``)."""
    match = re.match(r"\s+as\s+(?:(?:the|a|an|its|their)\s+)?([a-z][a-z-]*(?:\s+[a-z][a-z-]*)?)", sentence[end:])
    if not match:
        return ""
    words = match.group(1).split()
    while words and not is_content_word(words[-1]):
        words.pop()
    rest = sentence[end + match.start(1) + len(" ".join(words)) :]
    if not words or not all(is_content_word(w) for w in words):
        return ""
    return "as " + " ".join(words) if _ROLE_END.match(rest) or rest.split()[0] in PREPOSITIONS else ""


def _gap_words(gap: str) -> list[str] | None:
    """The gap's words, lowercased and without adverbs; None when they cannot hold a predicate."""
    if len(gap) > _MAX_GAP_CHARS or _NO_GAP.search(gap) or gap.lower() != gap:
        return None  # a capitalised word the extractor did not keep is still a name: the gap holds a third thing
    tokens = _WORD.findall(gap)
    if len(tokens) > _MAX_GAP_WORDS + 1:
        return None
    words = [t for t in tokens if not is_adverb(t)]
    return None if any(w in NO_FACT_WORDS and w != "and" for w in words) else words


@lru_cache(maxsize=8192)
def _gap(text: str) -> _Gap | None:
    """The words between two mentions, read; None when they cannot hold a predicate."""
    words = _gap_words(text)
    return _Gap.read(words) if words is not None else None


@dataclass(frozen=True, slots=True)
class _Gap:
    """The words between two mentions, read: a leading comma, a relative pronoun, a determiner before the object."""

    words: tuple[str, ...]
    apposition: bool
    relative: bool
    object_determiner: bool

    @classmethod
    def read(cls, words: list[str]) -> _Gap | None:
        apposition = bool(words) and words[0] == ","
        rest = words[1:] if apposition else list(words)
        if "," in rest[:-1] or (rest and rest[-1] == "," and len(rest) > 1):
            return None
        rest = [w for w in rest if w != ","]
        relative = apposition and bool(rest) and rest[0] in RELATIVES
        rest = rest[1:] if relative else rest
        determiner = False
        while rest and rest[-1] in DETERMINERS:
            rest.pop()
            determiner = True
        return cls(tuple(rest), apposition, relative, determiner)

    @property
    def bare_preposition(self) -> bool:
        return len(self.words) == 1 and self.words[0] in BARE_PREPOSITIONS and not self.relative


@dataclass(frozen=True, slots=True)
class _Mentions:
    """The two mentions in their sentence, and the word before the earlier one (``before``)."""

    sentence: str
    left: tuple[int, int]
    right: tuple[int, int]
    before: str

    @classmethod
    def of(cls, sentence: str, left: tuple[int, int], right: tuple[int, int]) -> _Mentions:
        return cls(sentence, left, right, _word_before(sentence, left[0]))

    def possessive(self, span: tuple[int, int]) -> bool:
        return self.sentence[span[0] : span[1]].endswith(_POSSESSIVE)

    def quoted(self) -> bool:
        """Either mention in quotes (a title: ``"Creatures of the Night"``)."""
        before = self.sentence[: self.left[0]].rstrip()[-1:]
        after = self.sentence[self.right[1] :].lstrip()[:1]
        return before in _QUOTES or after in _QUOTES


def _possessor_first(gap: _Gap) -> Predicate | None:
    """``Halyard's engineer Tom Reyes``: the later mention is the earlier one's engineer."""
    nouns = gap.words
    if gap.apposition or gap.relative or not 0 < len(nouns) <= 3 or nouns[-1] in NOT_ROLES:
        return None
    if not all(is_content_word(w) and not is_inflected_verb(w) for w in nouns):
        return None
    return Predicate(f"{nouns[-1]} of", subject_first=False)


def _possessor_last(mentions: _Mentions, gap: _Gap) -> Predicate | None:
    """The later mention owns the real object, whose head noun the predicate takes.

    ``Gannet Bay, Northwold University's field station`` is ``station of``, ``leads IOB's phytoplankton team`` is
    ``leads team of``, ``X is Y's director`` is ``director of``.
    """
    head = _head_noun(mentions.sentence, mentions.right[1])
    if head is None or gap.object_determiner:
        return None
    if not gap.words or all(w in COPULAS for w in gap.words):
        return Predicate(f"{head} of", subject_first=True) if gap.apposition or gap.words else None
    if gap.apposition and not gap.relative:
        return None
    found = verb_phrase(gap.words, relative=gap.relative)
    phrase = joined([*found.phrase.split(), head, "of"]) if found and found.subject_first else None
    return Predicate(phrase, subject_first=True) if phrase else None


def _bare(mentions: _Mentions, gap: _Gap) -> Predicate | None:
    """``Tom Reyes of Halyard``, ``Kirsty, from IOB``: not ``Creatures of the Night`` nor ``Jayton, Texas, in``."""
    before = mentions.before
    if (gap.object_determiner and gap.words[0] in {"of", "in"}) or before == ",":
        return None  # ``Creatures of the Night``, ``Political Ethics in an Age of Terror``: part of a title
    if before == "of" and gap.words[0] == "in":
        return None  # ``the Consulate General of the United States in Shanghai``: the consulate is in Shanghai
    if gap.apposition and before in PREPOSITIONS:
        return None  # ``flights to Russia, from Khujand``: the phrase goes with the verb
    if before.isalpha() and before not in FUNCTION_WORDS:
        return None  # ``represented Iran in``, ``administer India from``, ``New Brunswick in``: not the name's own
    if _object_is_modifier(mentions.sentence, mentions.right[1], verb=False):
        return None
    return Predicate(gap.words[0], subject_first=True)


def _apposition(mentions: _Mentions, gap: _Gap) -> Predicate | None:
    """``Moira Cathcart, the director of Gannet Bay`` (``director of``) or ``Osprey, owned by Victor`` (``owns``)."""
    participle = is_past_participle(gap.words[0]) or gap.words[0].endswith("ing")
    if participle and mentions.before:
        return None  # ``Walden is in Nova Scotia, located in ...``: the participle is said of the sentence's subject
    passive = passive_verb(gap.words)
    if passive:
        return _with_complement(mentions, Predicate(passive, subject_first=False))
    role = role_phrase(gap.words)
    if role is None or not any(is_content_word(w) for w in gap.words) or gap.words[0].endswith("ing"):
        return None
    if _object_is_modifier(mentions.sentence, mentions.right[1], verb=False):
        return None
    return Predicate(role, subject_first=True)


def _clause(mentions: _Mentions, gap: _Gap) -> Predicate | None:
    """``Victor Hale owns Osprey``, ``Kirsty studied at X``, ``Marchetti, who leads Y``, ``X is owned by Y``."""
    before = mentions.before
    if gap.relative and before == ",":
        return None  # ``Maessen of Buurmalsen, Netherlands, who had come``: the clause is said of an earlier name
    if not gap.relative and before in PREPOSITIONS:
        return None  # ``samples from Skerrin were deposited in NODA``: the earlier mention is no subject
    if not gap.relative and before.isalpha() and before not in FUNCTION_WORDS:
        return None  # ``native Lithuanian speakers in``, ``designated Anglican priests``: no subject either
    if _object_is_modifier(mentions.sentence, mentions.right[1], verb=True):
        return None
    found = verb_phrase(gap.words, relative=gap.relative)
    return _with_complement(mentions, found) if found else None


def _with_complement(mentions: _Mentions, found: Predicate) -> Predicate:
    complement = _complement(mentions.sentence, mentions.right[1])
    if not complement or len(found.phrase.split()) + len(complement.split()) > MAX_PREDICATE_WORDS:
        return found
    return Predicate(f"{found.phrase} ... {complement}", found.subject_first)


def predicate_between(
    sentence: str, left: tuple[int, int], right: tuple[int, int], others: Sequence[tuple[int, int]] = ()
) -> Predicate | None:
    """The predicate the sentence states between two mentions, or None when it states none this can trust.

    Args:
        sentence: The sentence holding both mentions.
        left: ``(start, end)`` of the earlier mention in ``sentence`` (a trailing ``'s`` included).
        right: ``(start, end)`` of the later mention.
        others: The other mentions of the sentence; one between the two means no predicate.

    Example:
        ```python
        s = "Osprey Ceramics is owned by Victor Hale."
        predicate_between(s, (0, 15), (28, 39))  # Predicate("owns", subject_first=False)
        ```
    """
    if left[1] > right[0] or right[0] - left[1] > _MAX_GAP_CHARS:
        return None
    if any(left[1] <= o[0] and o[1] <= right[0] for o in others if o not in (left, right)):
        return None
    gap = _gap(sentence[left[1] : right[0]])
    if gap is None:
        return None
    mentions = _Mentions.of(sentence, left, right)
    if mentions.before in {"by", "and", "or"} or mentions.before[:1].isdigit():
        return None  # an agent (``mixed by Sam, ...``), one of several subjects, a date: not the mention's own
    found = _read(mentions, gap)
    # Titles last: they are rare, and reading the whole sentence costs more than the rules.
    return None if found is None or mentions.quoted() or _title_case(sentence) else found


def _title_case(sentence: str) -> bool:
    """A title or heading (``Friends in Low Places``): no closing stop, and every word of four letters capitalised."""
    text = sentence.strip()
    if text[-1:] in ".!?":
        return False
    return all(w[:1].isupper() for w in _WORD.findall(text) if len(w) > 3 and w[:1].isalpha())


def _read(mentions: _Mentions, gap: _Gap) -> Predicate | None:
    """The pattern the gap and the mentions make, read by its own rule."""
    if mentions.possessive(mentions.left):
        return None if mentions.possessive(mentions.right) else _possessor_first(gap)
    if mentions.possessive(mentions.right):
        return _possessor_last(mentions, gap)
    if not gap.words:
        return None
    if gap.bare_preposition:
        return _bare(mentions, gap)
    if gap.apposition and not gap.relative:
        return _apposition(mentions, gap)
    return _clause(mentions, gap)
