"""``Community``: a cluster of related entities at one level of the hierarchy, with its report."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from agrag.components.data_models.closed_set import ClosedSet
from agrag.components.data_models.immutable import Immutable


def community_id_for(level: int, entity_ids: tuple[str, ...]) -> str:
    """Return the id of the community of these entities at this level: the same members keep the same id."""
    key = f"{level}|" + "|".join(sorted(entity_ids))
    return "c" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:15]


@dataclass(frozen=True, slots=True)
class Finding(Immutable):
    """One point a community report makes."""

    summary: str
    explanation: str = ""


class ReportMethod(ClosedSet, what="community report method"):
    """How a community report was written: by an LLM, or extracted from the members' source sentences."""

    LLM = "llm"
    EXTRACTIVE = "extractive"


@dataclass(frozen=True, slots=True)
class CommunityReport(Immutable):
    """What a community is about.

    Attributes:
        title: A short name (for an extractive report, its most central entities).
        summary: A paragraph (for an extractive report, its most representative source sentences).
        rating: Importance from 0 to 10.
        findings: Key points, each with an explanation.
        method: ``llm`` or ``extractive``.
    """

    title: str
    summary: str
    rating: float
    findings: tuple[Finding, ...] = ()
    method: ReportMethod = ReportMethod.EXTRACTIVE


@dataclass(frozen=True, slots=True)
class Community(Immutable):
    """A cluster of entities found by hierarchical Leiden.

    Attributes:
        id: Derived from level and members (see ``community_id_for``).
        level: 0 for the top level; a level-n community splits into level-(n+1) communities.
        entity_ids: Its members (resolved entities).
        parent_id: The community one level up, if any.
        report: Its report, once written.
    """

    id: str
    level: int
    entity_ids: tuple[str, ...]
    parent_id: str | None = None
    report: CommunityReport | None = None
