"""Name forms for mention linking: what a name is without its title or possessive, and which longer names it fits.

``name_form("Dr. Okafor's")`` is the core ``("okafor",)``, titled and possessive; ``fits`` says how a short form
stands for a longer name: a surname ("Okafor" of "Ada Okafor"), a first name ("Ada"), initials and a surname
("A. Okafor"), the name without some given names ("Ada Okafor" of "Ada Nkem Okafor"), the same name with a title
or a possessive, an
organisation without its legal form or a vessel without its prefix ("Frostline Scientific" of "Frostline
Scientific Ltd", "Shearwater" of "RV Shearwater"), or a model code without its maker ("CT-60" of "Halyard CT-60").
Tokens compare whole, so codes a character apart (``CT-6`` and ``CT-60``, ``GB-3`` and ``GB-3R``) never fit.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from agrag.components.data_models.closed_set import ClosedSet
from agrag.components.data_models.entity import is_typed

TITLES = frozenset(
    "dr doctor prof professor mr mrs ms miss mx sir dame lord lady rev revd reverend fr capt captain".split()
)
PARTICLES = frozenset("van von de del della der den du da di la le dos das bin ibn al ter ten".split())
LEGAL_FORMS = frozenset("ltd limited inc incorporated plc llc llp gmbh ag sa bv nv co corp corporation pty".split())
VESSEL_PREFIXES = frozenset("rv mv hms rrs fv sv ss".split())  # not "ms": a title first
DESIGNATORS = LEGAL_FORMS | VESSEL_PREFIXES
PERSON_LABELS = frozenset({"person"})
MAX_PERSON_WORDS = 4
# Head words of organisations, places, facilities, products and events: a name holding one is no person's, so its
# first and last word are no first name or surname ("Skerrin" is not the first name of "Skerrin Arms").
NOT_PERSON_WORDS = frozenset(
    """
    academy agency airport alliance archive archives arms association authority avenue bank bar bay beach bio
    board boatyard bridge building bureau cafe campus canal cape castle cathedral centre center chapel church
    city clinic club coast college committee company conference congress consortium corner council county court
    cove creek dam department district dock east estate faculty farm ferry festival field fields firth fjord
    forest forum foundation fund gallery garden gardens genomics glen group hall harbour harbor head health
    highway hill hills hospital hotel house inn institut institute institution instruments island islands isle
    labs laboratory lake lane library loch lodge marine market ministry mount mountain museum network north
    northern observatory ocean office orchestra park pass peninsula pier plaza point pond port press programme
    program project quay railway range reef region research reserve ridge river road rock school science sciences
    scientific sea service services shore sinfonia skills society sound south southern square station storm
    strait street studio survey systems team technologies technology terrace theatre tower town trust unit
    university valley village water west western wharf works yard acoustics engineering atlantic pacific
    symposium workshop summit expo infirmary royal national international united global films pictures studios
    records entertainment media magazine newspaper show broadcasting productions games software motors airlines
    quintet quartet trio band orchestra choir ensemble award awards prize cup league championship
    """.split()
)


_NOT_PERSON = NOT_PERSON_WORDS | DESIGNATORS | frozenset({"the", "of", "and", "for"})


class FitKind(ClosedSet, what="short-form kind"):
    """How a short form stands for a longer name."""

    SURNAME = "surname"
    FIRST_NAME = "first name"
    INITIALS = "initials and surname"
    FEWER_NAMES = "name without some given names"
    SAME_NAME = "the same name"  # with a title or a possessive the longer one lacks
    WITHOUT_DESIGNATOR = "name without its legal form or prefix"
    MODEL_CODE = "model code"


class NameForm(NamedTuple):
    """A name as mention linking reads it (a tuple: one is made per entity of a batch, and that adds up).

    Attributes:
        core: The folded words without titles and possessive (``("ada", "okafor")``); hyphens stay in a word.
        titled: A title (``Dr``, ``Prof.``) stood before it.
        possessive: It ended in ``'s``.
        proper: Every word is capitalized, an initial, a particle or a code: a proper name, not a phrase.
        person_like: A proper name of at most ``MAX_PERSON_WORDS`` words, none a code or a head word of a place
            or an organisation: it could be a person's name or part of one.
        initials: How many leading words are single letters (``A. Okafor`` has one).
    """

    core: tuple[str, ...]
    titled: bool
    possessive: bool
    proper: bool
    person_like: bool
    initials: int

    @property
    def decorated(self) -> bool:
        """A title or a possessive: the same core name written another way."""
        return self.titled or self.possessive

    @property
    def full(self) -> bool:
        """Two or more words, the first no initial: a name short forms may stand for."""
        return len(self.core) >= 2 and self.initials == 0

    @property
    def code(self) -> str:
        """The model code this name ends with (``ct-60``), or ``""``."""
        return self.core[-1] if self.core and is_code(self.core[-1]) else ""

    def designated(self) -> tuple[str, ...]:
        """The core without a trailing legal form or a leading vessel prefix; the core itself when it has none."""
        core = self.core
        if len(core) >= 2 and core[-1] in LEGAL_FORMS:
            core = core[:-1]
        if len(core) >= 2 and core[0] in VESSEL_PREFIXES:
            core = core[1:]
        return core


@lru_cache(maxsize=1 << 16)
def fold(word: str) -> str:
    """A word without accents, in lower case: ``Tomás`` is ``tomas``; letters with no accent to drop stay."""
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word.replace("’", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()  # 北京 stays itself


_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")
_STRIP = '.,;:!?()[]{}"“”'


def is_code(token: str) -> bool:
    """A folded word with both a digit and a letter: a model, site or unit code (``ct-60``, ``n2``, ``gb-3r``)."""
    return bool(_DIGIT.search(token)) and bool(_LETTER.search(token))


@lru_cache(maxsize=1 << 16)
def _word(word: str) -> tuple[str, bool]:
    """The folded word, and whether it may stand in a proper name as written (capitalized, a number, a particle)."""
    token = fold(word)
    if token in PARTICLES or token in DESIGNATORS or len(token) == 1 or _DIGIT.search(token):
        return token, True
    letters = word.replace("-", "").replace("'", "").replace("’", "")
    capitalized = letters.isalpha() and word[0].isupper() and not (len(letters) > 1 and word.isupper())
    return token, capitalized


def name_form(name: str) -> NameForm:
    """Read a name as written: titles and a possessive off, words folded.

    Example:
        ```python
        name_form("Dr. Okafor's")  # NameForm(core=("okafor",), titled=True, possessive=True, ...)
        ```
    """
    words = [stripped for w in name.split() if (stripped := w.strip(_STRIP))]
    possessive = bool(words) and words[-1][-2:] in {"'s", "’s"}
    if possessive:
        words[-1] = words[-1][:-2]
    titled = False
    while len(words) > 1 and fold(words[0].rstrip(".")) in TITLES:
        words, titled = words[1:], True
    if len(words) == 1 and fold(words[0]) in TITLES:
        words, titled = [], True
    read = [pair for w in words if (pair := _word(w))[0]]
    core = tuple(token for token, _ in read)
    initials = 0
    while initials < len(core) - 1 and len(core[initials]) == 1 and core[initials].isalpha():
        initials += 1
    # a colon or a bracket makes a title ("Atlantis: The Lost Empire", "Superman (It's Not Easy)"), not a name
    proper = bool(core) and all(ok for _, ok in read) and not any(c in name for c in ":()[]")
    return NameForm(core, titled, possessive, proper, proper and _person_like(core), initials)


def _person_like(core: tuple[str, ...]) -> bool:
    if len(core) > MAX_PERSON_WORDS or core[0] in PARTICLES or core[-1] in PARTICLES:
        return False
    return not any(t in _NOT_PERSON or _DIGIT.search(t) for t in core)


def is_person_label(label: str) -> bool:
    """A typed person label (``Person``)."""
    return label.casefold() in PERSON_LABELS


def may_be_person(form: NameForm, label: str) -> bool:
    """Person rules apply: a ``Person``, or an untyped name shaped like a person's; never another typed label."""
    if is_typed(label):
        return is_person_label(label) and bool(form.core)
    return form.person_like


def fit_kind(short: NameForm, short_label: str, full: NameForm, full_label: str) -> FitKind | None:
    """How ``short`` (an entity labelled ``short_label``) stands for ``full``, or None.

    The same name with a title or a possessive fits any name; the person rules need both to be people (see
    ``may_be_person``); the rules for things need neither to be a ``Person``.

    Example:
        ```python
        fit_kind(name_form("A. Okafor"), "Name", name_form("Ada Okafor"), "Person")  # FitKind.INITIALS
        ```
    """
    if short.core == full.core:
        return FitKind.SAME_NAME if short.core and _more_decorated(short, full) else None
    if may_be_person(short, short_label) and may_be_person(full, full_label):
        return person_fit(short, full)
    if not is_person_label(short_label) and not is_person_label(full_label):
        return thing_fit(short, full)
    return None


def person_fit(short: NameForm, full: NameForm) -> FitKind | None:
    """How ``short`` stands for ``full`` by the person rules (shapes unchecked), or None."""
    s, f = short.core, full.core
    if not full.full or not s or s == f:
        return None
    if short.initials:
        return FitKind.INITIALS if _initials_fit(short, f) else None
    if len(s) == 1:
        return FitKind.SURNAME if s[0] == f[-1] else FitKind.FIRST_NAME if s[0] == f[0] else None
    if 1 < len(s) < len(f) and s[-1] == f[-1] and _subsequence(s, f):
        return FitKind.FEWER_NAMES  # "Ada Okafor", "Nkem Okafor" of "Ada Nkem Okafor"; "van Beethoven" too
    return None


def _subsequence(s: tuple[str, ...], f: tuple[str, ...]) -> bool:
    words = iter(f)
    return all(word in words for word in s)


def _more_decorated(short: NameForm, full: NameForm) -> bool:
    """``Okafor's`` of ``Okafor``, ``Dr Ada Okafor`` of ``Ada Okafor``: decorations added, none taken away.

    A title alone does not make one word the same person ("Dr Hale" and "Hale" may be two Hales).
    """
    if (full.titled and not short.titled) or (full.possessive and not short.possessive):
        return False
    added_title = short.titled and not full.titled
    return (added_title and full.full) or (short.possessive and not full.possessive and not added_title)


def _initials_fit(short: NameForm, f: tuple[str, ...]) -> bool:
    """``A. N. Okafor`` of ``Ada Nkem Okafor``: the surname equal, each initial the first letter of a given name."""
    letters, rest = short.core[: short.initials], short.core[short.initials :]
    given = f[: len(f) - len(rest)]
    return (
        f[len(f) - len(rest) :] == rest
        and len(letters) <= len(given)
        and all(g.startswith(letter) for letter, g in zip(letters, given, strict=False))
    )


def thing_fit(short: NameForm, full: NameForm) -> FitKind | None:
    """How ``short`` stands for ``full`` by the rules for things (legal forms, prefixes, model codes), or None.

    Both must be proper names: "SH-24-07" is no model code of the title "Cruise report SH-24-07".
    """
    if short.core == full.core or not short.core or not (short.proper and full.proper):
        return None
    if full.designated() != full.core and short.core == full.designated() and short.designated() == short.core:
        return FitKind.WITHOUT_DESIGNATOR
    code = full.code
    maker = full.core[:-1]
    if code and short.core == (code,) and maker and not any(is_code(t) for t in maker):
        return FitKind.MODEL_CODE
    return None
