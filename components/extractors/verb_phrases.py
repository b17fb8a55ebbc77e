"""Verb phrases by rule: the words between two names read as a short predicate, and which name is its subject.

``predicate_phrases`` finds the words a sentence puts between two mentions; this module reads them: an active verb
with its particles (``reports to``, ``takes over from``, ``agrees to buy``, ``gives talk at``), a passive turned
active (``is owned by`` is ``owns`` from the later name), a copula and a role (``is a member of`` is ``member of``).
Verbs are written in their predicate form (``relation_verbs``: the present for lasting relations, the past for
one-off events), so one fact read in two tenses merges. ``predicate_of`` and ``written_predicate`` give a predicate
written elsewhere (an LLM's relation type, a triples file's predicate) the same form.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from agrag.components.extractors.relation_verbs import predicate_tense
from agrag.components.extractors.verb_forms import (
    PARTICIPLES_ONLY,
    STATIVE_PARTICIPLES,
    is_inflected_verb,
    is_past_participle,
)
from agrag.components.extractors.word_classes import (
    AUXILIARIES,
    BARE_PREPOSITIONS,
    COPULAS,
    DETERMINERS,
    NOT_ROLES,
    PREPOSITIONS,
    is_adverb,
    is_content_word,
)

MAX_PREDICATE_WORDS = 4
_WORD = re.compile(r"[^\W\d_][^\W\d_'’-]*(?:['’-][^\W\d_]+)*|\d+|\S")


@dataclass(frozen=True, slots=True)
class Predicate:
    """A normalised predicate phrase between two mentions, and which of them is its subject.

    Attributes:
        phrase: Lowercase, verbs in the third-person present, at most ``MAX_PREDICATE_WORDS`` words (``...`` marks
            where the object sits in ``replaced ... as director`` and does not count).
        subject_first: True when the earlier mention is the subject (``Victor owns Osprey``), False when the later
            one is (``Osprey is owned by Victor``).
    """

    phrase: str
    subject_first: bool


def joined(words: Sequence[str]) -> str | None:
    """``words`` joined, or None when they are none or more than ``MAX_PREDICATE_WORDS``."""
    return " ".join(words) if 0 < len(words) <= MAX_PREDICATE_WORDS else None


def role_phrase(words: Sequence[str]) -> str | None:
    """``[the] director of`` or ``based at``: at most two content words and a closing preposition."""
    kept = [w for w in words if w not in DETERMINERS]
    if not kept or kept[-1] not in PREPOSITIONS or kept[-1] == "by":
        return None
    content = kept[:-1]
    if len(content) > 2 or not all(is_content_word(w) for w in content) or (content and content[-1] in NOT_ROLES):
        return None
    if any(is_past_participle(w) or w.endswith("ing") for w in content[1:]):
        return None  # ``pressure mounted on``: a clause, not a role
    return joined(kept)


def _verb_tail(tail: Sequence[str]) -> list[str] | None:
    """What may follow the verb: particles (``reports to``), ``to`` and a verb, or one noun before a preposition."""
    if not tail:
        return []
    if tail[0] == "to" and len(tail) >= 2 and is_content_word(tail[1]) and not is_inflected_verb(tail[1]):
        rest = tail[2:]
        return ["to", tail[1], *rest] if all(w in PREPOSITIONS for w in rest) else None
    nouns = [w for w in tail if w not in PREPOSITIONS and w not in DETERMINERS]
    if len(nouns) > 1 or any(not is_content_word(w) for w in nouns) or (nouns and tail[-1] not in PREPOSITIONS):
        return None
    return [w for w in tail if w not in DETERMINERS]


def passive_verb(words: Sequence[str]) -> str | None:
    """``owned by``, ``owned and run by``: the verb (``owns``) of a passive whose agent is the later mention."""
    if len(words) >= 2 and words[-1] == "by" and is_past_participle(words[0]):
        middle = words[1:-1]
        if not middle or (len(middle) == 2 and middle[0] == "and" and is_past_participle(middle[1])):
            return predicate_tense(words[0])
    return None


@lru_cache(maxsize=8192)  # a corpus says a few thousand different things between its names, and says them often
def verb_phrase(words: tuple[str, ...], *, relative: bool) -> Predicate | None:
    """The predicate of ``[aux] verb [tail]`` or of a copula and a role, with its direction."""
    if not words:  # a triples file's predicate may be only adverbs ("also", "later")
        return None
    rest = list(words)
    auxiliaries = []
    while len(rest) > 1 and rest[0] in AUXILIARIES:
        auxiliaries.append(rest.pop(0))
    if auxiliaries and auxiliaries[-1] in {"has", "have", "had"} and not is_past_participle(rest[0]):
        rest.insert(0, auxiliaries.pop())  # ``has rail connections with``: ``has`` is the verb
    passive = passive_verb(rest)
    if passive or "and" in rest:
        return Predicate(passive, subject_first=False) if passive else None
    if any(a in COPULAS for a in auxiliaries) and not rest[0].endswith("ing"):
        role = role_phrase(rest)
        return Predicate(role, subject_first=True) if role else None
    phrase = _active(rest, auxiliaries=bool(auxiliaries), relative=relative)
    return Predicate(phrase, subject_first=True) if phrase else None


def _active(words: Sequence[str], *, auxiliaries: bool, relative: bool) -> str | None:
    """``owns``, ``reports to``, ``agrees to buy``, ``gives talk at``: a verb and what may follow it."""
    verb, tail = words[0], _verb_tail(words[1:])
    if tail is None or verb in BARE_PREPOSITIONS or not (is_content_word(verb) or verb in {"has", "have", "had"}):
        return None
    if not (auxiliaries or relative or is_inflected_verb(verb) or verb in {"has", "had"}):
        return None  # a bare word after a name is more often a noun (``the Halyard engineer``) than a verb
    if not auxiliaries and not relative and verb.endswith("ing"):
        return None  # ``Osprey, acting for Halyard``: a participle clause, not the name's own verb
    if (verb in PARTICIPLES_ONLY or verb in STATIVE_PARTICIPLES) and not auxiliaries:
        return joined([verb, *tail]) if tail else None  # ``later known as``: a passive without its ``is``
    return joined([predicate_tense(verb), *tail])


def predicate_of(text: str) -> Predicate | None:
    """A predicate written elsewhere (an LLM's triple: ``was published by``, ``WORKS_AT``) in the form the rules write.

    Verbs go to their predicate form (``relation_verbs``: the third-person present, the past for one-off events such
    as ``founded``) and a passive turns active (``was published by`` is ``published`` with the
    object as subject); anything else is kept lowercased, its words joined by single spaces (``ceo of``). None for
    a text with no words.

    Example:
        ```python
        predicate_of("was published by")  # Predicate("published", subject_first=False)
        ```
    """
    words = tuple(w for w in _WORD.findall(text.replace("_", " ").casefold()) if w[:1].isalpha())
    if not words:
        return None
    found = verb_phrase(tuple(w for w in words if not is_adverb(w)), relative=False)
    return found or Predicate(" ".join(words), subject_first=True)


RELATED = "RELATED_TO"  # the type of a relation no predicate names
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def written_predicate(raw: str, max_length: int = 48) -> Predicate:
    """An LLM's or a triples file's relation type (``WORKS_AT``, ``worksFor``, ``was published by``) as a fact's.

    The phrase the rules write (``works at``, ``works for``, ``published`` with the object first), so that every
    extractor's relations are the same fact records; an empty type, or one meaning only "related", is
    ``RELATED_TO``.
    """
    found = predicate_of(_CAMEL.sub(" ", raw))
    if found is None or found.phrase in {"related to", "related", "relates to"}:
        return Predicate(RELATED, subject_first=True)
    return Predicate(found.phrase[:max_length].strip(), found.subject_first)
