"""``RuleEntityTyper``: types the names of a batch (person, organisation, place, product, event, date) by rules."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from agrag.components.data_models.entity import normalize_name
from agrag.components.data_models.entity_type import EntityType
from agrag.components.data_models.name_occurrence import NameOccurrence, SpanKind
from agrag.components.extractors import entity_gazetteers as gz

PERSON, ORGANIZATION, PLACE = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.PLACE
PRODUCT, EVENT, DATE = EntityType.PRODUCT, EntityType.EVENT, EntityType.DATE

# Evidence weights: a name's own shape (a head word, a title, digits) outweighs one word of context around it.
STRONG, SHAPE, CUE, HINT, WEAK = 3.0, 2.0, 1.5, 1.0, 0.6
DECISIVE = 10.0
MIN_SCORE = 1.0
# What the evidence for one name says: a weight per type.
Votes = defaultdict[EntityType, float]


def _votes() -> Votes:
    return defaultdict(float)


# Occurrences of one name that vote: enough to outvote a stray cue, and a batch with a million mentions of a few
# hundred names types them in the time of a few thousand.
MAX_VOTES = 32
_CONNECTORS = frozenset({"of", "de", "del", "der", "van", "von", "la", "le", "du", "da", "di", "and", "&"})
_SEPARATORS = frozenset({":", ",", "-", "–", "is", "was", "are", "were"})
_STOPS = frozenset(
    "at on in of for with from to by per via into onto over under after before until since about as than that which "
    "who whose where when while but or so because if".split()
)
_CONTEXT_TOKEN = re.compile(r"[(),:;]|[^\s(),:;!?\"]+")
_NOUN_CLASSES = (
    (gz.PERSON_NOUNS, PERSON),
    (gz.ORGANIZATION_NOUNS, ORGANIZATION),
    (gz.PLACE_NOUNS, PLACE),
    (gz.PRODUCT_NOUNS, PRODUCT),
    (gz.EVENT_NOUNS, EVENT),
)
_ORGANIZATION_FIRST_WORDS = frozenset(
    "university institute institut instituto school college academy council bank department ministry office museum "
    "library society association federation union centre center fund foundation trust board commission committee "
    "agency authority laboratory".split()
)


def fold(word: str) -> str:
    """A word as the gazetteers hold it: lower case, no accents, no surrounding punctuation."""
    return normalize_name(word).replace(" ", "-")


class RuleEntityTyper:
    """Decides the type of every name of a batch from its shape, the words around each occurrence, and the batch.

    Each occurrence votes: its own shape (a date; digits in a code; a head word such as ``Ltd``, ``University``,
    ``Island`` or ``Symposium``; a given name first), the title left out of it (``Dr.`` for a person, ``RV`` for
    a vessel), the nouns next to it (``Skipper: X``, ``X (lab manager)``, ``X is an uninhabited island``,
    ``X harbour``) and the words before or after it (``near X``, ``west of X``, ``ask X``, ``X said``, ``X builds``).
    Votes add up over the batch (the first ``max_votes`` occurrences of each name), so one name gets one type
    however often it appears. Then single words and
    acronyms inherit from the longer names they belong to: a first name or surname of a person is a person, an
    acronym written in brackets after a name (or the initials of exactly one name) takes that name's type. A name
    whose best type scores under ``min_score``, or ties with another, stays untyped; so do demonyms and language
    names (``Norwegian``, ``Gaelic``), which name none of the six types.

    Usage:
        ```python
        typer = RuleEntityTyper()
        types = typer.run([NameOccurrence("Okafor", "Dr. Okafor said so.", 4, 10, title="Dr")])
        types["Okafor"]  # EntityType.PERSON
        ```
    """

    def __init__(self, min_score: float = MIN_SCORE, max_votes: int = MAX_VOTES) -> None:
        self.min_score = min_score
        self.max_votes = max_votes
        self._shapes: dict[tuple[str, SpanKind], Votes | None] = {}

    def run(self, occurrences: Iterable[NameOccurrence]) -> dict[str, EntityType]:
        """The type of each name of the batch, keyed by the name as written; untyped names are absent.

        Spellings that normalize alike (``normalize_name``) are one name and share a type.
        """
        votes: dict[str, Votes] = defaultdict(_votes)
        seen: Counter[tuple[str, str, SpanKind]] = Counter()  # (key, name, kind) -> occurrences: shapes count each
        names: dict[str, str] = {}
        keys: dict[str, str] = {}
        aliases: dict[str, set[str]] = defaultdict(set)  # acronym key -> keys of the names it was written after
        voted: Counter[str] = Counter()
        for occurrence in occurrences:
            key = keys.get(occurrence.name) or keys.setdefault(occurrence.name, normalize_name(occurrence.name))
            if voted[key] == self.max_votes:
                continue
            voted[key] += 1
            names.setdefault(key, occurrence.name)
            seen[(key, occurrence.name, occurrence.kind)] += 1
            add_context_votes(occurrence, votes[key])
            if " " in occurrence.name and (acronym := _bracketed_acronym(occurrence)) is not None:
                aliases[normalize_name(acronym)].add(key)
        blocked: set[str] = set()
        for (key, name, span_kind), count in seen.items():
            shape = self.shape(name, span_kind)
            if shape is None:
                blocked.add(key)
            for kind, weight in (shape or {}).items():
                votes[key][kind] += weight * count
        first = {key: self._decide(counter) for key, counter in votes.items() if key not in blocked}
        for key, extra in _inherited(names, first, aliases).items():
            if key in votes and key not in blocked:
                for kind, weight in extra.items():
                    votes[key][kind] += weight
        decided = {key: self._decide(votes[key]) for key in votes if key not in blocked}
        return {name: found for name, key in keys.items() if (found := decided.get(key)) is not None}

    def shape(self, name: str, kind: SpanKind = SpanKind.NAME) -> Votes | None:
        """What the name itself says, whatever surrounds it; None for a name that is never typed (a demonym)."""
        cache_key = (name, kind)
        if cache_key not in self._shapes:
            self._shapes[cache_key] = name_shape(name, kind)
        return self._shapes[cache_key]

    def _decide(self, counter: Votes) -> EntityType | None:
        ranked = sorted(counter.items(), key=lambda item: -item[1])[:2]
        if not ranked or ranked[0][1] < self.min_score:
            return None
        if len(ranked) == 2 and ranked[1][1] >= ranked[0][1]:
            return None  # a tie: ambiguous, so untyped
        return ranked[0][0]


def name_shape(name: str, kind: SpanKind = SpanKind.NAME) -> Votes | None:
    """Votes from the name alone: dates, codes, head words, given names, place names; None for demonyms."""
    votes = _votes()
    if kind is SpanKind.DATE:
        votes[DATE] += DECISIVE
        return votes
    if kind is SpanKind.CODE or any(c.isdigit() for c in name):
        votes[PRODUCT] += STRONG
        return votes
    words = [fold(w) for w in name.split()]
    if len(words) == 1:
        return _single_word_shape(words[0], kind)
    if "&" in name.split():  # "Macleod & Rae"
        votes[ORGANIZATION] += SHAPE
    _vote_heads(words, votes)
    first = words[0]
    if first in _ORGANIZATION_FIRST_WORDS:
        votes[ORGANIZATION] += SHAPE
    elif first in gz.PLACE_FIRST_WORDS:
        votes[PLACE] += SHAPE
    elif first in gz.EVENT_FIRST_WORDS:
        votes[EVENT] += SHAPE
    elif not votes and first in gz.GIVEN_NAMES and len(words) <= 3 and all(w.isalpha() for w in name.split()[1:]):
        votes[PERSON] += SHAPE
    return votes


def _vote_heads(words: list[str], votes: Votes) -> None:
    """The head word: the last (``Carrick Island``), or the one before ``of`` (``University of Lisdara``)."""
    last = words[-1]
    if last in gz.ORGANIZATION_HEADS or f"{words[-2]}_{last}" in gz.ORGANIZATION_HEAD_PAIRS:
        votes[ORGANIZATION] += STRONG
    elif last in gz.PLACE_HEADS:
        votes[PLACE] += STRONG
    elif last in gz.EVENT_HEADS:
        votes[EVENT] += STRONG
    elif last in gz.PLACE_NAMES:
        votes[PLACE] += SHAPE
    connector = next((i for i, w in enumerate(words) if w in _CONNECTORS), None)
    if connector:
        head = words[connector - 1]
        if head in gz.ORGANIZATION_HEADS:
            votes[ORGANIZATION] += STRONG
        elif head in gz.PLACE_HEADS:
            votes[PLACE] += STRONG


def _single_word_shape(word: str, kind: SpanKind) -> Votes | None:
    votes = _votes()
    if kind is SpanKind.ACRONYM:
        return votes
    if word in gz.PLACE_NAMES:
        votes[PLACE] += STRONG
    elif word in gz.GIVEN_NAMES:
        votes[PERSON] += CUE
    elif word in gz.ORGANIZATION_HEADS:
        votes[ORGANIZATION] += HINT
    elif word.endswith(gz.DEMONYM_ENDINGS) and word not in gz.DEMONYM_EXCEPTIONS:
        return None
    return votes


def add_context_votes(occurrence: NameOccurrence, votes: Votes) -> None:
    """Add to ``votes`` what the words around one occurrence, and the title left out of it, say."""
    title = fold(occurrence.title) if occurrence.title else ""
    if title in gz.PERSON_TITLES:
        votes[PERSON] += STRONG
    elif title in gz.VESSEL_PREFIXES:
        votes[PRODUCT] += STRONG
    _vote_before(_words_before(occurrence.sentence, occurrence.start, bool(title)), votes, " " not in occurrence.name)
    _vote_after(_words_after(occurrence.sentence, occurrence.end), votes)


def _words_before(sentence: str, start: int, titled: bool) -> list[str]:
    """Up to six words before the name, nearest first; brackets, commas, colons and semicolons are words too."""
    tokens = _CONTEXT_TOKEN.findall(sentence, max(0, start - 60), start)
    if titled and tokens:
        tokens.pop()  # the title itself
    return [t.rstrip(".") or t for t in reversed(tokens[-6:])]


def _words_after(sentence: str, end: int) -> list[str]:
    """Up to nine words after the name (past a possessive ``'s``), in order."""
    if sentence.startswith(("'s", "’s"), end):
        end += 2
    return [t.rstrip(".") or t for t in _CONTEXT_TOKEN.findall(sentence, end, end + 90)[:9]]


def _vote_before(before: list[str], votes: Votes, single_word: bool) -> None:
    if not before:
        return
    nearest = before[0].casefold()
    if nearest in gz.PLACE_PREPOSITIONS_STRONG:
        votes[PLACE] += CUE
    elif nearest in gz.PLACE_PREPOSITIONS_WEAK and single_word:  # "in Skerrin"; "in Beacon Telemetry" is a system
        votes[PLACE] += WEAK
    elif nearest in gz.PERSON_VERBS_BEFORE:
        votes[PERSON] += HINT
    if nearest == "of" and len(before) > 1:
        previous = before[1].casefold()
        if previous in gz.COMPASS_WORDS or previous in gz.PLACE_NOUNS:
            votes[PLACE] += SHAPE
        return
    # "Skipper: X", "the new skipper is X", "data manager, X"; but "university ID card" is a modifier, and in
    # "Site,City,Robots" a comma lists names: only a person's role stands before a comma or right before the name.
    labelled = before[0] != "," and before[0] in _SEPARATORS
    noun = next((w.casefold() for w in before if w.casefold() not in _SEPARATORS), "")
    for nouns, kind in _NOUN_CLASSES:
        if noun in nouns and (labelled or kind is PERSON):
            votes[kind] += SHAPE
            return


def _vote_after(after: list[str], votes: Votes) -> None:
    if not after:
        return
    head = after[0]
    if head == "(":
        inside = after[1 : after.index(")")] if ")" in after else []
        if inside and len(inside) <= 4 and all(w.islower() for w in inside):
            _vote_noun(inside, votes)
        return
    if head == "," and len(after) > 1 and after[1].casefold() == "who":
        votes[PERSON] += CUE
        return
    if head == "," or head.casefold() in gz.COPULAS:
        rest = after[2:] if len(after) > 1 and after[1] == "been" else after[1:]
        _vote_noun(_noun_phrase(rest), votes)
        return
    word = head.casefold()
    if word in gz.PERSON_VERBS_AFTER:
        votes[PERSON] += HINT
    elif word in gz.ORGANIZATION_VERBS_AFTER:
        votes[ORGANIZATION] += HINT
    elif head.islower() and word in gz.PLACE_NOUNS:
        votes[PLACE] += CUE


def _noun_phrase(words: Sequence[str]) -> list[str]:
    """The lower-case words of the phrase that opens ``words``, up to a preposition, a name or punctuation."""
    phrase: list[str] = []
    for word in words:
        if not word.islower() or word in _STOPS or not word[0].isalpha():
            break
        if len(phrase) > 1 and word.endswith(("ed", "ing")):
            break  # "a reliability metric tracked per robot": the phrase ended before the participle
        phrase.append(word)
        if len(phrase) == 6:
            break
    return phrase


def _vote_noun(words: Sequence[str], votes: Votes) -> None:
    """Vote for the type of the first class noun (``skipper``, ``consultancy``, ``island``) in ``words``."""
    for word in words:
        folded = word.removesuffix("'s").removesuffix("’s")
        for nouns, kind in _NOUN_CLASSES:
            if folded in nouns:
                votes[kind] += SHAPE
                return


def _bracketed_acronym(occurrence: NameOccurrence) -> str | None:
    """``IOB`` in ``Institut Océanique de Brévannes (IOB)``: an acronym in brackets right after a longer name."""
    text = occurrence.sentence[occurrence.end : occurrence.end + 12]
    if not text.startswith(" (") or ")" not in text:
        return None
    inside = text[2 : text.index(")")]
    return inside if inside.isupper() and inside.isalpha() and 2 <= len(inside) <= 8 else None


def _initials(name: str) -> str:
    return "".join(w[0] for w in name.split() if w[0].isupper() and w.casefold() not in _CONNECTORS)


def _inherited(
    names: dict[str, str], first: dict[str, EntityType | None], aliases: dict[str, set[str]]
) -> dict[str, Votes]:
    """Votes names inherit from the other names of the batch, by their first pass types.

    Single words and acronyms inherit from the longer names they belong to; an untyped full name inherits from its
    surname when that is typed a person on its own.
    """
    extra: dict[str, Votes] = defaultdict(_votes)
    by_initials: dict[str, list[str]] = defaultdict(list)
    for key, kind in first.items():
        words = key.split()
        if kind is None or len(words) < 2:
            continue
        by_initials[_initials(names[key]).casefold()].append(key)
        if kind is PERSON:
            extra[words[0]][PERSON] += SHAPE
            extra[words[-1]][PERSON] += SHAPE
        elif kind in (ORGANIZATION, PLACE) and extra[words[0]][kind] < HINT:
            extra[words[0]][kind] += HINT / 2
    for key, name in names.items():
        words = key.split()
        if len(words) in (2, 3) and first.get(key) is None and first.get(words[-1]) is PERSON:
            extra[key][PERSON] += SHAPE  # "Ada Okafor", when "Dr. Okafor" says Okafor is a person
        if len(words) > 1:
            continue
        written_after = aliases.get(key, set())
        sources = written_after or (set(by_initials.get(key, ())) if name.isupper() and len(key) >= 2 else set())
        kinds = {kind for source in sources if (kind := first.get(source)) is not None}
        if len(kinds) == 1:
            extra[key][kinds.pop()] += STRONG if written_after else SHAPE
    return extra
