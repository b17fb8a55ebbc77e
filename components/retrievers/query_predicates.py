"""Finds the relations a question uses, by rules: its content verbs and relational nouns, as predicate phrases."""

from __future__ import annotations

from agrag.components.extractors.relation_verbs import STATIVE, guess_past, known_verb, predicate_form
from agrag.components.retrievers.query_hints import hint_spans
from agrag.components.retrievers.query_words import AUXILIARIES, Word, words_of

# The word after a verb that belongs to its predicate: "looks after", "studied at", "takes part in".
PARTICLES: dict[str, tuple[str, ...]] = {
    "look": ("after",), "pay": ("for",), "base": ("in",), "locate": ("in",), "situate": ("in",), "bear": ("in",),
    "study": ("at",), "work": ("at", "for", "on", "with"), "take": ("over", "part in"), "carry": ("out",),
    "come": ("to", "from"), "belong": ("to",), "marry": ("to",), "move": ("to", "from"), "live": ("in",),
    "die": ("in",), "serve": ("as", "on"), "graduate": ("from",), "sign": ("with", "for"), "play": ("for", "in"),
    "star": ("in",), "compete": ("in",), "flow": ("through", "into"), "go": ("to",), "know": ("for", "as"),
    "consist": ("of",), "report": ("to",), "collaborate": ("with",), "partner": ("with",),
}  # fmt: skip
# Adjectives that state a relation with their preposition.
ADJECTIVES = {"responsible": "for", "married": "to", "related": "to", "affiliated": "with", "similar": "to"}
# Verbs whose object comes before an "as": "replaced Alistair Beaton as director" -> "replaced ... as".
AS_VERBS = frozenset({"replace", "succeed", "appoint", "elect", "hire", "name", "choose"})
# Nouns that state a relation: "the maker of", "Alistair Beaton's successor", "her master's degree".
RELATIONAL_NOUNS = {
    "maker": "makes", "manufacturer": "makes", "owner": "owns", "manager": "manages", "supervisor": "supervises",
    "founder": "founded", "director": "directs", "producer": "produces", "writer": "wrote", "author": "wrote",
    "publisher": "publishes", "employer": "employs", "supplier": "supplies", "successor": "succeeded",
    "predecessor": "preceded", "winner": "won", "creator": "created", "designer": "designs", "builder": "built",
    "funder": "funds", "sponsor": "sponsors", "leader": "leads", "leadership": "leads", "operator": "operates",
    "pi": "leads", "head": "leads", "member": "member of", "spouse": "married to", "wife": "married to",
    "husband": "married to", "birthplace": "born in", "degree": "studied at", "phd": "studied at",
    "headquarters": "based in", "student": "studies at", "alumnus": "studied at", "employee": "works at",
}  # fmt: skip
# Always relational, wherever they stand; the others only before "of" or after a possessive ("Beaton's successor").
_ALWAYS = frozenset({"birthplace", "degree", "phd", "headquarters", "successor", "predecessor", "leadership"})
_DETERMINERS = frozenset("the a an its their his her our my your this these those each every".split())  # not "that"
# Before a verb's base form: do-support, modals and "to" ("did Halyard quote", "came out to fix", "can join").
_BASE_TRIGGERS = frozenset("do does did to will would can could shall should may might".split())
_SKIPPED_ADVERBS = frozenset({"now", "last", "also", "still", "first", "later", "once", "currently", "formerly"})


def _verb(words: list[Word], index: int, triggered: bool) -> tuple[str, bool] | None:
    """The lemma of the verb at ``index`` and whether it is a participle, or None when it is no verb there.

    A base form is a verb only after a trigger not yet used by another (``did the skipper retire``), and not before
    another verb form (``skipper`` there is a noun).
    """
    word = words[index]
    previous = words[index - 1].lower if index else ""
    if word.lower in AUXILIARIES or previous in _DETERMINERS or (index and words[index - 1].possessive):
        return None  # "the service", "its refit", "CT-60's annual service"
    known = known_verb(word.lower)
    if known is not None:
        lemma, form = known
        if form == "base":
            following = words[index + 1].lower if index + 1 < len(words) else ""
            if not triggered or known_verb(following) is not None:
                return None  # "annual service", "the prediction work", "did the skipper retire": nouns
        return lemma, form in ("past", "participle")
    guessed = guess_past(word.lower)
    return (guessed, True) if guessed is not None else None


def _phrase(words: list[Word], index: int, lemma: str, participle: bool, where: bool) -> str:
    """The predicate of the verb at ``index``; under ``where``, a verb's place preposition is implied."""
    following = [w.lower for w in words[index + 1 : index + 6]]
    if participle and following[:1] == ["by"] and lemma not in ("base", "locate", "situate"):
        return predicate_form(lemma)  # "owned by" -> "owns": the question names the object
    head = predicate_form(lemma, participle=participle)
    if lemma in AS_VERBS and "as" in following[1:]:
        return f"{head} ... as"
    for particle in PARTICLES.get(lemma, ()):
        if " ".join(following[: particle.count(" ") + 1]) == particle:
            return f"{head} {particle}"
    implied = (PARTICLES.get(lemma) or ("",))[0]
    if implied in ("at", "in") and (where or lemma in STATIVE):
        return f"{head} {implied}"  # "where did she work" -> "works at"; "where is it based" -> "based in"
    return head


def _noun(words: list[Word], index: int) -> str | None:
    word = words[index]
    predicate = RELATIONAL_NOUNS.get(word.lower)
    if predicate is None:
        return None
    before_of = index + 1 < len(words) and words[index + 1].lower == "of"
    after_possessive = index > 0 and words[index - 1].possessive
    return predicate if word.lower in _ALWAYS or before_of or after_possessive else None


def normal_predicate(phrase: str) -> str:
    """A predicate written by someone else, in the same form: ``Supplied by`` -> ``supplies``.

    ``studies at`` becomes ``studied at``; a phrase whose first word is no known verb is only lower-cased.
    """
    words = phrase.casefold().split()
    if not words:
        return ""
    known = known_verb(words[0])
    if known is None:
        return " ".join(words)
    lemma, form = known
    participle = form in ("past", "participle")
    if participle and words[1:2] == ["by"] and lemma not in STATIVE:
        return predicate_form(lemma)
    return " ".join([predicate_form(lemma, participle=participle), *words[1:]])


def relation_keywords(query: str, names: list[tuple[int, int, str]] | None = None) -> tuple[str, ...]:
    """The predicates ``query`` uses, normalised, in order, each once (names and quoted titles are skipped).

    Verbs give their predicate form with a particle that belongs to them (``looks after``, ``takes part in``,
    ``based in``); a passive gives the active form (``owned by`` -> ``owns``); ``replaced X as`` gives
    ``replaced ... as``; relational nouns and adjectives give the predicate they state (``the maker of`` ->
    ``makes``, ``responsible for``). Auxiliaries and nouns that share a verb's spelling (``the service``) do not.

    Args:
        query: The question.
        names: Its names as ``hint_spans`` gives them (found here when None).

    Usage:
        ```python
        relation_keywords("Who owns the workshop that built the frame?")  # ('owns', 'built')
        ```
    """
    names = hint_spans(query) if names is None else names
    words = words_of(query)
    found: list[str] = []
    triggered = False  # a do, a modal or a "to" waits for its verb
    where = any(w.lower == "where" for w in words)
    for index, word in enumerate(words):
        if word.lower in _BASE_TRIGGERS:
            triggered = True
        if word.lower in _SKIPPED_ADVERBS or any(s <= word.start < e for s, e, _ in names):
            continue
        phrase: str | None = None
        if word.lower in ADJECTIVES and index + 1 < len(words) and words[index + 1].lower == ADJECTIVES[word.lower]:
            phrase = f"{word.lower} {ADJECTIVES[word.lower]}"
        elif (verb := _verb(words, index, triggered)) is not None:
            phrase = _phrase(words, index, *verb, where=where)
            triggered = triggered and known_verb(word.lower) != (verb[0], "base")
        else:
            phrase = _noun(words, index)
        if phrase is not None and phrase not in found:
            found.append(phrase)
    return tuple(found)
