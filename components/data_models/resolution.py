"""What entity resolution decided: merges (undoable), homonyms kept apart, and near-miss candidates."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.closed_set import ClosedSet
from agrag.components.data_models.extraction import Extraction


class MergeOutcome(ClosedSet, what="merge decision"):
    """What resolution decided about two look-alike entities."""

    MERGED = "merged"
    KEPT_APART = "kept_apart"


class ResolutionRule(ClosedSet, what="resolution rule"):
    """The rule that found two entities alike (see ``EntityResolver``)."""

    LABEL = "label"  # same name, an untyped label folded into a typed one
    FUZZY = "fuzzy"
    ACRONYM = "acronym"
    EMBEDDING = "embedding"
    LLM = "llm"
    HOMONYM = "homonym"
    SHORT_FORM = "short_form"  # a surname, first name, title or code form linked to the one full name it fits


MERGED = MergeOutcome.MERGED  # the names the merge log's readers have always imported
KEPT_APART = MergeOutcome.KEPT_APART


@dataclass(frozen=True, slots=True)
class MergeDecision:
    """One line of the merge log.

    ``merged``: ``member_id`` now resolves to ``resolved_id``; the member stays stored (its mentions and relations
    untouched) with a pointer to the resolved entity, so undoing the merge only removes the pointer.
    ``kept_apart``: the two entities looked alike but stay two, and ``reason`` says why.

    Attributes:
        member_id: The entity that was merged (or kept apart).
        resolved_id: The entity it became (or was compared with).
        decision: ``merged`` or ``kept_apart``.
        rule: The rule that found them alike: ``label`` (same name, an untyped label folded into a typed one),
            ``fuzzy``, ``acronym``, ``embedding``, ``llm``, ``homonym`` or ``short_form``.
        score: The rule's score (a rapidfuzz ratio 0-100, a cosine, or 1.0 for a yes from the LLM).
        reason: The decision in words, for the log.
    """

    member_id: str
    resolved_id: str
    decision: MergeOutcome
    rule: ResolutionRule
    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class ResolutionCandidate:
    """A near miss: two entities similar enough to look at, not similar enough to merge. Kept out of the graph."""

    entity_id: str
    other_id: str
    name: str
    other_name: str
    score: float
    rule: ResolutionRule


@dataclass(frozen=True, slots=True)
class Resolution:
    """The resolver's output: the extraction with exact duplicates merged, plus its decisions."""

    extraction: Extraction
    decisions: tuple[MergeDecision, ...] = ()
    candidates: tuple[ResolutionCandidate, ...] = ()


@dataclass(frozen=True, slots=True)
class MergeLogEntry:
    """A stored line of the merge log: a decision of one run, with both entities' names and whether it was undone."""

    id: str
    member_id: str
    resolved_id: str
    decision: MergeOutcome
    rule: ResolutionRule
    score: float
    reason: str
    undone: bool
    member_name: str
    resolved_name: str
