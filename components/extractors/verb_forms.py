"""Verb forms by rule: the base of an inflected English verb and its third-person present, with no model.

A fact's predicate is written in one form whatever tense the sentence used (``owned``, ``owning`` and ``own`` are
all ``owns``), so the same fact read from two notes has one id and merges. A table of irregular verbs and of common
regular ones settles most words; the rest go by suffix rules, which may misspell a rare verb's base but always
spell it the same way, which is what merging needs.
"""

from __future__ import annotations

import re
from functools import lru_cache

_IRREGULAR = {
    form: base
    for base, forms in {
        "be": "am is are was were been being",
        "have": "has had having",
        "do": "does did done doing",
        "go": "goes went gone going",
        "bear": "bore born borne",
        "become": "became",
        "begin": "began begun",
        "bring": "brought",
        "build": "built",
        "buy": "bought",
        "catch": "caught",
        "choose": "chose chosen",
        "come": "came",
        "draw": "drew drawn",
        "drive": "drove driven",
        "eat": "ate eaten",
        "fall": "fell fallen",
        "feed": "fed",
        "flee": "fled",
        "freeze": "froze frozen",
        "dig": "dug",
        "deal": "dealt",
        "shake": "shook shaken",
        "sink": "sank sunk",
        "spring": "sprang sprung",
        "stick": "stuck",
        "sweep": "swept",
        "swing": "swung",
        "weep": "wept",
        "wake": "woke woken",
        "forgive": "forgave forgiven",
        "overtake": "overtook overtaken",
        "light": "lit",
        "slide": "slid",
        "bend": "bent",
        "breed": "bred",
        "bleed": "bled",
        "feel": "felt",
        "fight": "fought",
        "find": "found",
        "fly": "flew flown flies",
        "forget": "forgot forgotten",
        "get": "got gotten",
        "give": "gave given",
        "grow": "grew grown",
        "hang": "hung",
        "hear": "heard",
        "hide": "hid hidden",
        "hold": "held",
        "keep": "kept",
        "know": "knew known",
        "lay": "laid",
        "lead": "led",
        "leave": "left",
        "lend": "lent",
        "lose": "lost",
        "make": "made",
        "mean": "meant",
        "meet": "met",
        "oversee": "oversaw overseen",
        "pay": "paid",
        "ride": "rode ridden",
        "rise": "rose risen",
        "run": "ran",
        "say": "said",
        "see": "saw seen",
        "seek": "sought",
        "sell": "sold",
        "send": "sent",
        "shoot": "shot",
        "sing": "sang sung",
        "sit": "sat",
        "sleep": "slept",
        "speak": "spoke spoken",
        "spend": "spent",
        "stand": "stood",
        "steal": "stole stolen",
        "strike": "struck",
        "swim": "swam swum",
        "take": "took taken",
        "teach": "taught",
        "tell": "told",
        "think": "thought",
        "throw": "threw thrown",
        "understand": "understood",
        "undertake": "undertook undertaken",
        "wear": "wore worn",
        "win": "won",
        "withdraw": "withdrew withdrawn",
        "write": "wrote written",
    }.items()
    for form in forms.split()
}
_IRREGULAR_BASES = frozenset(_IRREGULAR.values())
# Bases the suffix rules would misspell or that pick between candidates (``manag`` or ``manage``?).
KNOWN_BASES = frozenset(
    """
    accept acquire add advise agree aim analyse analyze announce appoint approve arrange assess assign attend award
    base believe call cancel cause change chair close collaborate collect combine complete contain continue control
    coordinate create deliver decide declare define deposit describe design develop direct discover donate employ
    enable end evaluate examine fabricate fill found fund graduate host hire include inspect install introduce invite
    join judge label lecture like live locate love maintain manage measure merge model move name need note notice
    oppose organise organize own partner pass place plan prefer prepare present produce provide publish receive
    recommend refer reject release remove rename replace report represent require resign retire return review
    schedule secure serve service share sign solve sponsor stop study submit succeed supervise supply support
    survey test train transfer travel tune use validate visit welcome work
    """.split()
)
_ENDS_IN_SIBILANT = re.compile(r"(?:s|sh|ch|x|z|o)$")
_DOUBLED = re.compile(r"[^aeiou][aeiou]([bdgmnprt])\1$")  # ``planned``, ``stopped``; not ``added``
_DOUBLED_L = re.compile(r"ll$")  # ``controlled``, ``travelled``: undoubled only when the table knows the base
_CONSONANT_Y = re.compile(r"[^aeiou]y$")
# Irregular past participles that are no past tense: without ``is`` before them they still read as passive
# (``the Royal Polytechnic, later known as ...``), so they keep their form.
PARTICIPLES_ONLY = frozenset(
    """arisen been begun born borne chosen done drawn driven eaten fallen flown forgotten given gone grown hidden known
    overseen ridden risen seen shown spoken stolen sung swum taken thrown undertaken withdrawn worn written""".split()
)
# Participles used as adjectives: with no ``is`` they still say where or what a thing is (``the campus located off
# Bartles Road``), never what it did.
STATIVE_PARTICIPLES = frozenset("based called entitled headquartered listed located named situated titled".split())
# Past participles spelled like their base (``is run by``).
_PARTICIPLE_AS_BASE = frozenset(
    {"become", "come", "cost", "cut", "hit", "let", "overcome", "put", "read", "run", "set"}
)
# Verbs ending in -ly (``supply``), not adverbs.
LY_VERBS = frozenset(
    {"ally", "apply", "comply", "fly", "imply", "multiply", "rally", "rely", "reply", "supply", "tally"}
)


def _candidates(word: str) -> list[str]:
    """Possible bases of ``word``, most likely first."""
    if word.endswith("ied") or word.endswith("ies"):
        return [word[:-3] + "y"]
    if word.endswith("ed"):
        stem = word[:-2]
        undoubled = [stem[:-1]] if _DOUBLED.search(stem) or _DOUBLED_L.search(stem) else []
        return [*undoubled, stem + "e", stem]
    if word.endswith("ing") and len(word) > 4:
        stem = word[:-3]
        undoubled = [stem[:-1]] if _DOUBLED.search(stem) or _DOUBLED_L.search(stem) else []
        return [*undoubled, stem + "e", stem]
    if word.endswith("es") and _ENDS_IN_SIBILANT.search(word[:-2]):
        return [word[:-2], word[:-1]]
    if word.endswith("s") and not word.endswith("ss"):
        return [word[:-1]]
    return [word]


# Stems that end like ones wanting an ``e`` back (``invad`` -> ``invade``) but do not (``visit``, ``honor``), and the
# reverse; the table of bases settles the common ones before these rules are asked.
_NO_E = frozenset(
    """abandon anchor armor author censor color develop doctor endeavor envelop favor flavor gallop harbor honor labor
    mentor mirror monitor sponsor tutor focus bias canvas""".split()
)
_WANTS_E = frozenset(
    "invit unit excit recit ignit cit complet delet compet phon ton clon postpon zon hon aton condon".split()
)
_E_AFTER_CLUSTER = ("ang", "eng", "rg", "dg", "ns", "rs", "ls", "ps", "rc", "nc", "rv", "lv", "bl", "cl", "dl", "fl",
                    "gl", "kl", "pl", "tl", "zl", "ud")  # fmt: skip
_E_AFTER_VOWEL = {  # the last consonant of a stem ending vowel-consonant, and the vowels before which it wants an e
    "c": "aeiou", "v": "aeiou", "z": "aeiou", "s": "aeiou", "t": "aou", "d": "aiou", "r": "aiou", "n": "i",
    "l": "iu", "m": "aeiou", "b": "aeiou", "p": "aeiou", "k": "aeiou", "g": "aeiou",
}  # fmt: skip


def _wants_e(stem: str) -> bool:
    """Whether the base of ``stem + ed`` ends in an ``e`` (``created``, ``moved``), by the shape of its end."""
    if stem in _NO_E or len(stem) < 2:
        return False
    if stem in _WANTS_E or stem.endswith(_E_AFTER_CLUSTER) or stem.endswith("u"):
        return True
    last, before = stem[-1], stem[-2]
    if re.search(r"(?:ea|ai|oi|ee|oo|ou|oa|au|ei|ie)[^aeiou]$", stem) or before not in "aeiou":
        return False  # ``treat``, ``join``; ``start``, ``walk``: a vowel pair or a cluster keeps its end
    return before in _E_AFTER_VOWEL.get(last, "")


def _guess(word: str, candidates: list[str]) -> str:
    """The base by rule, for a verb neither table knows."""
    if word.endswith(("ied", "ies")):
        return candidates[0]
    if word.endswith(("ed", "ing")):
        stem = word[:-2] if word.endswith("ed") else word[:-3]
        if _DOUBLED.search(stem):
            return stem[:-1]
        return stem + "e" if _wants_e(stem) else stem
    return candidates[0]


def base_form(word: str) -> str:
    """The base (infinitive) of an English verb form: ``owned`` -> ``own``, ``supplies`` -> ``supply``."""
    lowered = word.casefold()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if lowered in KNOWN_BASES or lowered in LY_VERBS:
        return lowered
    candidates = _candidates(lowered)
    known = next((c for c in candidates if c in KNOWN_BASES or c in _IRREGULAR_BASES), None)
    return known or _guess(lowered, candidates)


def third_person(base: str) -> str:
    """The third-person singular present of a base form: ``own`` -> ``owns``, ``supply`` -> ``supplies``."""
    if base == "be":
        return "is"
    if base == "have":
        return "has"
    if _CONSONANT_Y.search(base):
        return base[:-1] + "ies"
    if _ENDS_IN_SIBILANT.search(base):
        return base + "es"
    return base + "s"


@lru_cache(maxsize=4096)
def present_tense(word: str) -> str:
    """``owned``, ``owning``, ``own`` and ``owns`` all become ``owns``."""
    return third_person(base_form(word))


def is_inflected_verb(word: str) -> bool:
    """True for a word that reads as an inflected verb (``owns``, ``owned``, ``led``), not a bare noun."""
    lowered = word.casefold()
    if lowered in _IRREGULAR or lowered.endswith("ed"):
        return True
    # ``listings``, ``buildings``: no verb form ends in -ings
    return len(lowered) > 3 and lowered.endswith("s") and not lowered.endswith(("ss", "us", "is", "ings"))


def is_past_participle(word: str) -> bool:
    """True for a form that can follow ``is`` in a passive (``owned``, ``run``, ``led``, ``written``)."""
    lowered = word.casefold()
    if lowered.endswith("ed") or lowered in _PARTICIPLE_AS_BASE:
        return True
    return lowered in _IRREGULAR and _IRREGULAR[lowered] not in {"be", "have", "do"} and not lowered.endswith("s")
