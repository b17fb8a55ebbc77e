"""Closed classes of English words that the predicate rules read (``predicate_phrases``), with no model.

Determiners, auxiliaries, prepositions and the words that stop a fact (negations, hedges, conjunctions, pronouns,
quantifiers) are small closed sets; every other lowercase word is a content word (a noun, adjective or verb).
"""

from __future__ import annotations

from agrag.components.extractors.verb_forms import LY_VERBS

DETERMINERS = frozenset("the a an its their his her our my your this these those".split())
COPULAS = frozenset("is are was were be been being am".split())
AUXILIARIES = COPULAS | frozenset("has have had having will shall can must do does did".split())
PREPOSITIONS = frozenset(
    """about across against along among around as at behind below beside between beyond by down for from in inside
    into near of off on onto out outside over past through throughout to toward towards under up upon via with within
    without back away""".split()
)
BARE_PREPOSITIONS = frozenset({"of", "at", "from", "in"})
RELATIVES = frozenset({"who", "which", "that"})
# Words that stop a fact: with a negation or a hedge the sentence does not assert it, a conjunction opens another
# clause, a pronoun is that clause's subject, a number picks some of the object rather than the object.
NO_FACT_WORDS = frozenset(
    """not never no nor neither cannot may might could should would
    and or but while whereas although though because so yet if unless until when where after before since whether
    then whilst whose whom
    he she it they we i you him them us me itself himself herself themselves
    one two three four five six seven eight nine ten several many some few most such""".split()
)
ADVERBS = frozenset(
    """also still now then already later soon just once again even ever often usually currently formerly previously
    recently jointly together here there only""".split()
)
# Words that may follow an object mention without making it a modifier of the next noun (``the Osprey factory``).
AFTER_OBJECT = frozenset({"last", "next", "this", "every", "each", "today", "yesterday", "both", "all"})
FUNCTION_WORDS = DETERMINERS | AUXILIARIES | PREPOSITIONS | NO_FACT_WORDS | RELATIVES | {"to"}
# After an object mention, these go on with the sentence rather than with a noun the mention would modify.
GOES_ON = PREPOSITIONS | NO_FACT_WORDS | RELATIVES | AUXILIARIES | AFTER_OBJECT | {"to", "and", "or"}
# Words before a role noun that say which one, not what it is (``Britain's first Polytechnic``, ``Prague's oldest``).
NOT_ROLES = frozenset(
    """first second third last new old former current own main only other same next original best largest biggest oldest
    newest highest longest tallest smallest youngest""".split()
)


def is_adverb(word: str) -> bool:
    """``jointly``, ``also``: a word a predicate drops (``supply`` and ``rely`` are verbs, not adverbs)."""
    return word in ADVERBS or (word.endswith("ly") and len(word) > 4 and word not in LY_VERBS)


def is_content_word(word: str) -> bool:
    """A lowercase word that is neither a function word nor punctuation: a noun, adjective or verb."""
    return (word.isalpha() or "-" in word) and word not in FUNCTION_WORDS
