"""The words of a question, with their places: what the rule-based query analysis reads."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A word, with inner hyphens, apostrophes and dots (CT-60, SH-24-07, master's, e.g); never a leading symbol.
_TOKEN = re.compile(r"[^\W_]+(?:[-'’.][^\W_]+)*")

QUESTION_WORDS = frozenset({"who", "whom", "whose", "what", "which", "where", "when", "why", "how"})
AUXILIARIES = frozenset(
    """
    is are was were be been being am do does did done doing has have had having will would shall should can could
    may might must 's
    """.split()
)
# Words that never start or hold a name, capitalised or not (function words, months and days, wh-words).
FUNCTION_WORDS = (
    QUESTION_WORDS
    | AUXILIARIES
    | frozenset(
        """
    a an the this that these those there here it its they them their he him his she her hers we us our you your i
    me my mine and or nor but if then than so as of in on at by for from to into onto with without within about
    above after against along among around before behind below beneath beside besides between beyond during except
    inside near off out outside over past since through throughout till toward towards under until up upon via
    not no yes also just only both either neither each every any some all much many more most other another such
    same own very too again once while whether although though because however
    january february march april june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    """.split()
    )
)
MONTHS = frozenset("january february march april may june july august september october november december".split())


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a question: its text as written, where it is, and its lower-case form without a possessive."""

    text: str
    start: int
    end: int

    @property
    def possessive(self) -> bool:
        """``Shearwater's``, ``DEEPSONG’s``: a name ends here."""
        return self.text.endswith(("'s", "’s")) and len(self.text) > 2

    @property
    def bare(self) -> str:
        """The word without its possessive ``'s``."""
        return self.text[:-2] if self.possessive else self.text

    @property
    def lower(self) -> str:
        """The bare word in lower case, as the word lists hold it."""
        return self.bare.casefold()

    @property
    def capitalised(self) -> bool:
        """It starts with a capital letter (``Shearwater``, ``CT-60``, ``Élodie``)."""
        return self.text[0].isupper()

    @property
    def function_word(self) -> bool:
        """A word that never names anything (``the``, ``Which``, ``August``)."""
        return self.lower in FUNCTION_WORDS


def words_of(query: str) -> list[Word]:
    """The words of ``query`` in order."""
    return [Word(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(query)]
