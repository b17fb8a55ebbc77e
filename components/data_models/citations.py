"""What checking and rendering the citations of a draft answer return."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agrag.components.data_models.immutable import Immutable


class InvalidReason(StrEnum):
    """Why a cited evidence id cannot stand."""

    MALFORMED = "malformed"  # looks like an id (two dots) but is not one
    NOT_FETCHED = "not_fetched"  # in scope, but this session never returned its text
    OUT_OF_SCOPE = "out_of_scope"  # outside the session's documents, even if it was read before


@dataclass(frozen=True, slots=True)
class InvalidCitation(Immutable):
    """One cited id that was removed from the answer.

    Attributes:
        id: The id in its canonical form, or as written when it is malformed.
        reason: Why it is not valid.
    """

    id: str
    reason: InvalidReason


@dataclass(frozen=True, slots=True)
class UnsupportedClaim(Immutable):
    """A cited sentence whose figures or names the evidence it cites does not contain.

    Attributes:
        sentence: The sentence as written in the checked answer.
        cited: The valid ids it cites.
        missing_figures: Its figures that appear as no number in that evidence, as written.
        missing_names: Its names with a word of three or more letters that evidence lacks.
    """

    sentence: str
    cited: tuple[str, ...]
    missing_figures: tuple[str, ...]
    missing_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CitationCheck(Immutable):
    """The outcome of checking a draft answer's citations; the claim checks are warnings only.

    Attributes:
        answer: The draft with invalid citations removed and valid ids in canonical form.
        cited: The valid ids, in first-cited order.
        invalid: The removed ids and why, in order of appearance.
        uncited: Sentences stating a figure or a name with no valid citation of their own.
        unsupported: Cited sentences with figures or names their evidence lacks.
        grounded: True when the answer cites at least one valid id and no invalid one.
    """

    answer: str
    cited: tuple[str, ...]
    invalid: tuple[InvalidCitation, ...]
    uncited: tuple[str, ...]
    unsupported: tuple[UnsupportedClaim, ...]
    grounded: bool


@dataclass(frozen=True, slots=True)
class Source(Immutable):
    """One numbered source of a rendered answer.

    Attributes:
        number: Its reference number, ``[number]`` in the text.
        id: The evidence id it stands for.
        title: The document's title.
        heading_path: The headings above the passage, outermost first.
        version: The document version the id names.
        current: False when that version has been superseded.
    """

    number: int
    id: str
    title: str
    heading_path: tuple[str, ...]
    version: str
    current: bool


@dataclass(frozen=True, slots=True)
class RenderedAnswer(Immutable):
    """An answer with numbered references and the sources they point at.

    Attributes:
        text: The answer with ``[1]``-style references, ending with a "Sources:" block when it cites any.
        sources: The sources in number order.
    """

    text: str
    sources: tuple[Source, ...]
