"""The verbs of relations, as lemmas: their forms (``supply`` -> ``supplied``) and each lemma's predicate form.

Shared by what extraction writes and what query analysis looks for, so a fact's predicate and a question's relation
keyword meet in one form. ``verb_forms`` goes the other way, from any form of any verb to its base.

The predicate form is what a fact's predicate and a query's relation keyword are written as: the third person
present for lasting relations (``owns``, ``supplies``, ``manages``) and the past for one-off events
(``founded``, ``studied``, ``replaced``), as people state them; stative participles keep their form (``based``,
``located``, ``born``).
"""

from __future__ import annotations

from functools import lru_cache

from agrag.components.extractors.verb_forms import base_form, third_person

# Verbs that relate two things, as lemmas. Irregular forms are listed below; the rest inflect by rule.
RELATION_VERBS = frozenset(
    """
    own supply manage make build found establish fund sponsor employ hire lead direct produce write publish design
    create invent develop manufacture sell buy acquire operate run service repair fix maintain replace succeed
    precede join leave retire work study teach train graduate attend marry divorce bear die live move visit locate
    base situate know call name elect appoint serve play perform sing record release star act feature host
    broadcast premiere debut compose sign win lose beat defeat award receive give get hold carry use count measure
    quote pay cost charge deposit approve supervise process sequence share come go take happen occur overheat fail
    spoil compromise shut close open start begin end belong border flow contain include consist cover connect link
    report handle ship deliver install deploy capture invade conquer rule govern represent chair coordinate look
    help finance borrow lend license store keep seize skipper check test analyse analyze monitor survey collect
    inspect calibrate book schedule cancel organise organize speak meet send bring fight grow draw choose drive ride
    break find tell say marry adopt partner collaborate advise mentor coach captain edit translate adapt compete
    """.split()
)
_IRREGULAR: dict[str, tuple[str, ...]] = {  # lemma: (past, past participle)
    "make": ("made", "made"), "build": ("built", "built"), "lead": ("led", "led"), "write": ("wrote", "written"),
    "sell": ("sold", "sold"), "buy": ("bought", "bought"), "run": ("ran", "run"), "leave": ("left", "left"),
    "teach": ("taught", "taught"), "bear": ("bore", "born"), "know": ("knew", "known"), "win": ("won", "won"),
    "lose": ("lost", "lost"), "give": ("gave", "given"), "get": ("got", "gotten"), "hold": ("held", "held"),
    "come": ("came", "come"), "go": ("went", "gone"), "take": ("took", "taken"), "shut": ("shut", "shut"),
    "begin": ("began", "begun"), "sing": ("sang", "sung"), "beat": ("beat", "beaten"), "lend": ("lent", "lent"),
    "keep": ("kept", "kept"), "speak": ("spoke", "spoken"), "pay": ("paid", "paid"), "find": ("found", "found"),
    "meet": ("met", "met"), "send": ("sent", "sent"), "bring": ("brought", "brought"), "fight": ("fought", "fought"),
    "grow": ("grew", "grown"), "draw": ("drew", "drawn"), "choose": ("chose", "chosen"), "drive": ("drove", "driven"),
    "ride": ("rode", "ridden"), "break": ("broke", "broken"), "tell": ("told", "told"), "say": ("said", "said"),
    "cost": ("cost", "cost"), "broadcast": ("broadcast", "broadcast"),
}  # fmt: skip
# One-off events: their predicate is the past (``founded``, ``studied at``, ``replaced ... as``).
EVENT_VERBS = frozenset(
    """
    bear die study graduate found establish marry divorce replace succeed join leave retire build win move hire
    appoint elect invent discover release publish write create adopt premiere debut
    """.split()
)
# Participles that name a state rather than an act: ``based in``, ``located in``, ``born in``.
STATIVE = frozenset({"base", "locate", "situate", "bear", "know"})
_NOT_VERBS = frozenset(
    "hundred red bed need speed seed breed feed shed steed indeed naked wicked sacred kindred bred led".split()
)
_VOWELS = "aeiou"


def _doubles(lemma: str) -> bool:
    """``stop`` -> ``stopped``: one syllable ending consonant-vowel-consonant (not w, x, y)."""
    syllables = sum(1 for i, c in enumerate(lemma) if c in _VOWELS and (i == 0 or lemma[i - 1] not in _VOWELS))
    return (
        len(lemma) >= 3
        and syllables == 1
        and lemma[-1] not in _VOWELS + "wxy"
        and lemma[-2] in _VOWELS
        and lemma[-3] not in _VOWELS
    )


def past(lemma: str, participle: bool = False) -> str:
    """``study`` -> ``studied``, ``stop`` -> ``stopped``, ``build`` -> ``built`` (``born`` as participle of bear)."""
    if lemma in _IRREGULAR:
        return _IRREGULAR[lemma][1 if participle else 0]
    if lemma.endswith("e"):
        return lemma + "d"
    if lemma.endswith("y") and lemma[-2:-1] not in tuple(_VOWELS):
        return lemma[:-1] + "ied"
    return lemma + lemma[-1] + "ed" if _doubles(lemma) else lemma + "ed"


def gerund(lemma: str) -> str:
    """``manage`` -> ``managing``, ``run`` -> ``running``, ``die`` -> ``dying``."""
    if lemma.endswith("ie"):
        return lemma[:-2] + "ying"
    if lemma.endswith("e") and not lemma.endswith("ee"):
        return lemma[:-1] + "ing"
    return lemma + lemma[-1] + "ing" if _doubles(lemma) else lemma + "ing"


def _forms(lemma: str) -> dict[str, str]:
    return {  # a participle spelt as the past is the past ("made")
        lemma: "base",
        third_person(lemma): "present",
        past(lemma, participle=True): "participle",
        past(lemma): "past",
        gerund(lemma): "gerund",
    }


_FORM_OF: dict[str, tuple[str, str]] = {}
for _lemma in sorted(RELATION_VERBS):
    for _form, _kind in _forms(_lemma).items():
        _FORM_OF.setdefault(_form, (_lemma, _kind))
_FORM_OF["found"] = ("find", "past")  # "where is X found": found as a past of find, not the base of founded


def known_verb(word: str) -> tuple[str, str] | None:
    """The lemma of a word that is a form of a relation verb, and which form (None for other words).

    The form is ``base``, ``present``, ``past``, ``participle`` or ``gerund``: ``supplied`` -> ``("supply", "past")``.
    """
    return _FORM_OF.get(word.casefold())


def guess_past(word: str) -> str | None:
    """The lemma of an unknown past form by its spelling; None when ``word`` does not look like one.

    ``compromised`` -> ``compromise``, ``spoiled`` -> ``spoil``, ``free-flowed`` -> ``free-flow``.
    """
    lower = word.casefold()
    stem = lower[:-2]
    if len(lower) < 5 or not lower.endswith("ed") or lower in _NOT_VERBS or not stem.replace("-", "").isalpha():
        return None
    if stem.endswith("i"):
        return stem[:-1] + "y"
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]
    silent_e = (
        stem.endswith(("v", "c", "g", "z", "u"))  # moved, produced, engaged, organized, argued
        or (stem[-1] == "s" and stem[-2] in _VOWELS)  # used, compromised
        or (stem[-1] in "tdk" and stem[-2] in _VOWELS and stem[-3] not in _VOWELS and len(stem) > 4)  # located
    )
    return stem + "e" if silent_e else stem


def predicate_form(lemma: str, *, participle: bool = False) -> str:
    """How a predicate with this verb is written: ``supplies``, ``founded``, ``based`` (a stative participle).

    Args:
        lemma: The verb's lemma.
        participle: The verb was met as a participle (``based in``): stative verbs keep that form.
    """
    if lemma in STATIVE and (participle or lemma == "bear"):
        return past(lemma, participle=True)
    if lemma in EVENT_VERBS:
        return past(lemma)
    return third_person(lemma)


@lru_cache(maxsize=4096)
def predicate_tense(word: str) -> str:
    """Any form of a verb in its predicate form: ``owned`` -> ``owns``, ``studies`` -> ``studied``."""
    return predicate_form(base_form(word))
