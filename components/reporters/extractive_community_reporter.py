"""``ExtractiveCommunityReporter``: offline community reports made of the sources' own sentences."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any

from haystack import component

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community, CommunityReport, Finding, ReportMethod
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.relation import Relation
from agrag.components.reporters.bounded_evidence import bounded_evidence
from agrag.components.reporters.source_sentences import CommunityEvidence, SourceIndex

_FINAL_PUNCTUATION = (".", "!", "?", ":", ";", '"', "'", ")")


def importance(evidence: Sequence[CommunityEvidence]) -> list[float]:
    """Each community's size (members) plus weight (internal relation weight, supporting chunks): what is rated."""
    return [len(e.community.entity_ids) + e.weight for e in evidence]


def importance_ratings(evidence: Sequence[CommunityEvidence]) -> list[float]:
    """Rate each community from 0 to 10: ``10 * log(1 + size + weight) / log(1 + max(size + weight))``.

    ``size`` is the number of members and ``weight`` the internal relation weight (supporting chunks); the maximum
    runs over the communities given, so the largest, densest one rates 10. Rounded to one decimal.
    """
    return ratings_of(importance(evidence))


def ratings_of(raw: Sequence[float]) -> list[float]:
    """The ratings of ``importance_ratings`` from each community's ``importance``, against the largest of ``raw``."""
    top = math.log1p(max(raw, default=0.0))
    return [round(10.0 * math.log1p(r) / top, 1) if top > 0 else 0.0 for r in raw]


def _join_names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def join_sentences(sentences: Iterable[str]) -> str:
    """Join sentences into a paragraph; one without final punctuation (a table row) gets a full stop."""
    return " ".join(s if s.endswith(_FINAL_PUNCTUATION) else f"{s}." for s in sentences)


@component
class ExtractiveCommunityReporter:
    """Writes community reports offline, from the entity graph and the sources' own sentences.

    A member's centrality is its weighted degree inside the community: the relations between two members, each
    weighing the number of chunks that support it. The title names the three (two in a pair) most central members.
    The summary is made of the ``sentences`` most representative source sentences: those of the chunks that mention
    a member (``mentions``) or support an internal relation, scored by the members they name (whole words,
    case-insensitively), each member counting ``1 + its centrality``; ties go to the earlier sentence (chunks in the
    order given). Sentences are exact text of the chunks, without list or table markup, each at most once. The
    findings present the ``findings`` most central members, each with its best sentence (or its description).
    The rating is ``importance_ratings``.

    Usage:
        ```python
        reporter = ExtractiveCommunityReporter(sentences=3, findings=5)
        reported = reporter.run(communities, entities, relations, chunks, mentions=[(chunk_id, entity_id)])
        print(reported["communities"][0].report.title)  # "Maria Chen, Orion Planner and Vega Perception"
        ```
    """

    def __init__(self, sentences: int = defaults.COMMUNITY_REPORT_SENTENCES, findings: int = 5) -> None:
        """Check and store the settings.

        Args:
            sentences: How many source sentences make a summary.
            findings: How many members get a finding.

        Raises:
            ComponentConfigError: A setting is out of range.
        """
        if sentences < 1:
            raise ComponentConfigError(
                "ExtractiveCommunityReporter",
                f"sentences must be at least 1, got {sentences}",
                "Set ingest.communities.report_sentences to 1 or more.",
            )
        if findings < 0:
            raise ComponentConfigError(
                "ExtractiveCommunityReporter", f"findings must be at least 0, got {findings}", "Pass 0 or more."
            )
        self.sentences = sentences
        self.findings = findings

    @component.output_types(communities=list[Community], importance=list[float])
    def run(
        self,
        communities: list[Community],
        entities: list[Entity],
        relations: list[Relation],
        chunks: list[Chunk],
        mentions: list[tuple[str, str]],
        *,
        names: list[tuple[str, str]] | None = None,
    ) -> dict[str, Any]:
        """Write the report of every community.

        Args:
            communities: The communities to report on.
            entities: Their member entities (others are ignored).
            relations: Relations of the graph; those between two members of a community count for it.
            chunks: The chunks that mention members or support their relations.
            mentions: ``(chunk id, entity id)`` pairs: which chunk names which entity.
            names: ``(name, entity id)`` of every entity a sentence may name, when the communities are a part of
                those reported on (None: ``entities``); a longer name of another part still wins over a member's.

        Returns:
            ``communities``: the same communities, in the same order, each with its ``report``; ``importance``: what
            each was rated from (``importance``), so reports written in several calls can be rated on one scale
            (``ratings_of`` over all of them).
        """
        index = SourceIndex(entities, relations, chunks, mentions, names)
        evidence = bounded_evidence(communities, index, summary=self.sentences, findings=self.findings)
        raw = importance(evidence)
        return {
            "communities": [
                dataclasses.replace(e.community, report=self.report(e, rating))
                for e, rating in zip(evidence, ratings_of(raw), strict=True)
            ],
            "importance": raw,
        }

    def report(self, evidence: CommunityEvidence, rating: float) -> CommunityReport:
        """Write the extractive report of one community from its evidence."""
        names = [e.name for e in evidence.members[: 3 if len(evidence.members) > 2 else 2]]
        title = _join_names(names) if names else f"Community {evidence.community.id}"
        findings: list[Finding] = []
        used: list[str] = []
        for entity in evidence.members[: self.findings]:
            explanation = evidence.best_sentence(entity.id, avoid=used) or entity.description
            used.append(explanation)
            label = f" ({entity.label})" if entity.label else ""
            findings.append(Finding(summary=f"{entity.name}{label}", explanation=explanation))
        return CommunityReport(
            title=title,
            summary=join_sentences(evidence.sentences[: self.sentences]),
            rating=rating,
            findings=tuple(findings),
            method=ReportMethod.EXTRACTIVE,
        )
