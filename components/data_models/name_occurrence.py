"""``NameOccurrence``: one place a name was found, with what the rule typer reads around it."""

from __future__ import annotations

from typing import NamedTuple

from agrag.components.data_models.closed_set import ClosedSet


class SpanKind(ClosedSet, what="span kind"):
    """How the lexical extractor found a span: a capitalised run, an acronym, a code with digits, or a date."""

    NAME = "name"
    ACRONYM = "acronym"
    CODE = "code"
    DATE = "date"


class NameOccurrence(NamedTuple):
    """A name in one sentence.

    A named tuple rather than a frozen dataclass: a batch makes one per mention (a million chunks make millions),
    and a tuple is built several times faster.

    Attributes:
        name: The name as the entity will carry it (a title such as ``Dr.`` left out).
        sentence: The sentence it was found in.
        start: Where the name starts in ``sentence``.
        end: Where it ends (a possessive ``'s`` after it is outside).
        kind: How it was found.
        title: The honorific or vessel prefix written before it and left out of ``name`` (``Dr``, ``RV``), or "".
    """

    name: str
    sentence: str
    start: int
    end: int
    kind: SpanKind = SpanKind.NAME
    title: str = ""
