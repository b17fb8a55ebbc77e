"""``LLMCommunityReporter``: community reports written by an LLM, with an extractive fallback."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from haystack import component

from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community, CommunityReport, Finding, ReportMethod
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.relation import Relation
from agrag.components.errors import LLMError
from agrag.components.llm.openai_chat_client import ChatMessage, OpenAIChatClient
from agrag.components.reporters.extractive_community_reporter import ExtractiveCommunityReporter, importance, ratings_of
from agrag.components.reporters.source_sentences import CommunityEvidence, gather_evidence

logger = logging.getLogger(__name__)

_SYSTEM = (
    "You are an analyst who writes short reports about communities of related entities in a knowledge graph. "
    "Use only the information you are given, and answer with one JSON object and nothing else."
)
_TASK = (
    "Write a report about the community of entities below, from its entities, their relations and the source "
    "sentences.\n"
    'Answer with one JSON object: {"title": "<a short name that names its key entities>", '
    '"summary": "<one paragraph: what the community is and how its entities relate>", '
    '"rating": <its importance from 0 (trivial) to 10 (central to the whole corpus)>, '
    '"findings": [{"summary": "<one key point>", "explanation": "<a few sentences that support it>"}]}\n'
    "Give three to five findings."
)
_MAX_LINE_CHARS = 400


def _line(text: str) -> str:
    """One prompt line: white space collapsed, cut at ``_MAX_LINE_CHARS``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_LINE_CHARS else flat[: _MAX_LINE_CHARS - 3] + "..."


def _described(head: str, description: str) -> str:
    return _line(f"- {head}: {description}" if description.strip() else f"- {head}")


def build_prompt(evidence: CommunityEvidence, max_input_chars: int) -> str:
    """The user message for one community: its members, relations and source sentences, most central first.

    The three lists share ``max_input_chars``: each may use a third of it plus whatever the lists before it left.
    """
    names = {e.id: e.name for e in evidence.members}
    members = [_described(f"{e.name} ({e.label})" if e.label else e.name, e.description) for e in evidence.members]
    relations = [
        _described(
            f"{names.get(r.source_id, r.source_id)} -{r.type}-> {names.get(r.target_id, r.target_id)}", r.description
        )
        for r in evidence.relations
    ]
    sections = [
        ("Entities (name (type): description)", members),
        ("Relations (source -TYPE-> target: description)", relations),
        ("Source sentences", [_line(f"- {s}") for s in evidence.sentences]),
    ]
    parts = [_TASK]
    used = 0
    for i, (heading, lines) in enumerate(sections):
        limit = max_input_chars * (i + 1) // len(sections)
        parts.append(f"\n{heading}:")
        for line in lines:
            if used + len(line) + 1 > limit:
                break
            parts.append(line)
            used += len(line) + 1
    return "\n".join(parts)


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise LLMError(f"The LLM's community report has no {key!r} text: {str(data)[:200]!r}")
    return value.strip()


def _rating(data: dict[str, Any]) -> float:
    value = data.get("rating")
    try:
        rating = float(value) if isinstance(value, int | float | str) and not isinstance(value, bool) else math.nan
    except ValueError:
        rating = math.nan
    if math.isnan(rating):
        raise LLMError(f"The LLM's community report has no numeric 'rating': {value!r}")
    return min(10.0, max(0.0, rating))


def _findings(data: dict[str, Any]) -> tuple[Finding, ...]:
    items = data.get("findings", [])
    if not isinstance(items, list):
        raise LLMError(f"The LLM's community report has 'findings' that are not a list: {str(items)[:200]!r}")
    findings = []
    for item in items:
        if isinstance(item, str) and item.strip():
            findings.append(Finding(summary=item.strip()))
        elif isinstance(item, dict) and isinstance(item.get("summary"), str) and item["summary"].strip():
            explanation = item.get("explanation", "")
            findings.append(
                Finding(item["summary"].strip(), explanation.strip() if isinstance(explanation, str) else "")
            )
        else:
            raise LLMError(f"The LLM's community report has a malformed finding: {str(item)[:200]!r}")
    return tuple(findings)


def parse_report(data: dict[str, Any]) -> CommunityReport:
    """Read the LLM's JSON answer as a report (a rating outside 0-10 is clamped).

    Raises:
        LLMError: the answer lacks a title, summary or numeric rating, or has malformed findings.
    """
    return CommunityReport(
        _text(data, "title"), _text(data, "summary"), _rating(data), _findings(data), ReportMethod.LLM
    )


@component
class LLMCommunityReporter:
    """Asks an LLM to write the report of each community; falls back to an extractive report where it fails.

    The prompt lists the community's members (name, label, description), the relations between them and the most
    representative source sentences, most central first, within ``max_input_chars``; the evidence and ratings are
    those of ``ExtractiveCommunityReporter``. The LLM answers JSON with a title, summary, rating and findings. When
    the endpoint fails or the answer is malformed for a community, that community gets the extractive report
    instead, and ``fallbacks`` counts it. Communities are reported ``concurrency`` at a time; the output keeps the
    input order.

    Usage:
        ```python
        client = OpenAIChatClient("http://localhost:11434/v1", model="llama3.1")
        result = LLMCommunityReporter(client, concurrency=4).run(communities, entities, relations, chunks, mentions)
        result["communities"], result["fallbacks"]
        ```
    """

    def __init__(
        self,
        client: OpenAIChatClient,
        max_input_chars: int = 8000,
        concurrency: int = 4,
        *,
        fallback: ExtractiveCommunityReporter | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Check and store the settings.

        Args:
            client: The chat endpoint.
            max_input_chars: Budget of the community data in one prompt (entities, relations, sentences).
            concurrency: How many prompts are in flight at once.
            fallback: Writes the report of a community the LLM failed on (default: ``ExtractiveCommunityReporter()``).
            progress: Called with 1 after each community's answer (for a progress bar), from the calling thread.

        Raises:
            ComponentConfigError: A setting is out of range.
        """
        if max_input_chars < 100:
            raise ComponentConfigError(
                "LLMCommunityReporter",
                f"max_input_chars must be at least 100, got {max_input_chars}",
                "Pass 100 or more (the prompt needs room for a community's entities and relations).",
            )
        if concurrency < 1:
            raise ComponentConfigError(
                "LLMCommunityReporter", f"concurrency must be at least 1, got {concurrency}", "Pass 1 or more."
            )
        self.client = client
        self.max_input_chars = max_input_chars
        self.concurrency = concurrency
        self.fallback = fallback or ExtractiveCommunityReporter()
        self.progress = progress

    @component.output_types(communities=list[Community], fallbacks=int, importance=list[float])
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
        """Write the report of every community (inputs as for ``ExtractiveCommunityReporter.run``).

        Returns:
            ``communities``: the same communities, in the same order, each with its ``report``; ``fallbacks``: how
            many of them got an extractive report because the LLM failed; ``importance``: what an extractive
            report's rating is computed from (see ``ExtractiveCommunityReporter.run``).
        """
        evidence = gather_evidence(communities, entities, relations, chunks, mentions, names=names)
        raw = importance(evidence)
        ratings = ratings_of(raw)
        answers: list[CommunityReport | None] = []
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="community-report") as pool:
            for answer in pool.map(self._ask, evidence):  # in input order, as each one is ready
                answers.append(answer)
                if self.progress is not None:
                    self.progress(1)
        reported: list[Community] = []
        for item, rating, report in zip(evidence, ratings, answers, strict=True):
            reported.append(dataclasses.replace(item.community, report=report or self.fallback.report(item, rating)))
        fallbacks = sum(1 for report in answers if report is None)
        return {"communities": reported, "fallbacks": fallbacks, "importance": raw}

    def _ask(self, evidence: CommunityEvidence) -> CommunityReport | None:
        """The LLM's report of one community, or None if the LLM failed (logged)."""
        messages = [ChatMessage("system", _SYSTEM), ChatMessage("user", build_prompt(evidence, self.max_input_chars))]
        try:
            return parse_report(self.client.complete_json(messages))
        except LLMError as exc:
            logger.warning("LLM report of community %s failed, using an extractive one: %s", evidence.community.id, exc)
            return None
