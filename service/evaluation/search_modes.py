"""Scores the agent's first search: the ``search_evidence`` tool in each of its modes, as recipes are scored.

Each mode runs through the same tool definition the agent and the MCP server call (an unscoped evidence session on
the evaluation's store), asking for as many passages as a recipe's evaluation limit, and its hits become a strict
passage list: a hit is always a passage, so the strict and the expanded lists are the same. The ``graph`` mode
walks as the ``bridge`` recipe does, so the two rows should agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from agrag.components.data_models.evidence import MAX_LIMIT, EvidenceSearchMode
from agrag.components.errors import AgragError
from agrag.service.evaluation.passages import evidence_passages
from agrag.service.tools.registry import MCP_READ_TOOLS
from agrag.service.tools.search_evidence_tool import EvidenceSearchResult
from agrag.service.tools.tool import ToolContext, ToolHost

if TYPE_CHECKING:
    from agrag.pipelines.runtime import Runtime
    from agrag.service.evaluation.runner import SystemRun

SEARCH_TOOL = "search_evidence"
"""The ``kind`` of a search-mode row in the report, and the start of its name."""

Tick = Callable[[str, int], None]


def mode_label(mode: EvidenceSearchMode, variant: str = "") -> str:
    """The report row of ``mode``: ``search_evidence (graph)``, or ``search_evidence (graph, LLM triples)``."""
    return f"{SEARCH_TOOL} ({mode.value}{', ' + variant if variant else ''})"


def passages_of(result: EvidenceSearchResult, index: Mapping[str, int]) -> list[int]:
    """The corpus indexes of a search's hits, best first, each passage once."""
    return evidence_passages((hit.id for hit in result.hits), index)


def rank_search_modes(
    runtime: Runtime,
    modes: Sequence[EvidenceSearchMode],
    questions: Sequence[str],
    *,
    index: Mapping[str, int],
    depth: int,
    limit: int,
    tick: Tick,
    variant: str = "",
) -> list[SystemRun]:
    """One row per mode: each question's passage list (``depth`` long), searched for ``limit`` hits.

    A search that fails (a leg reported failed, or the tool refused) counts in the row's ``failed``; a refused one
    scores an empty list.
    """
    from agrag.service.evaluation.runner import SystemRun  # noqa: PLC0415 - the runner imports this module

    tool = MCP_READ_TOOLS[SEARCH_TOOL]
    session = runtime.evidence_session()
    context = ToolContext(ToolHost(runtime), session=session)
    runs = []
    for mode in modes:
        label = mode_label(mode, variant)
        lists: list[list[int]] = []
        failed, failure = 0, ""
        for done, question in enumerate(questions, start=1):
            arguments = {"query": question, "mode": mode.value, "limit": min(limit, MAX_LIMIT)}
            try:
                result: EvidenceSearchResult = tool.run(context, arguments)
            except AgragError as exc:
                failed += 1
                failure = failure or f"{type(exc).__name__}: {exc}"
                lists.append([])
            else:
                if result.failed_legs:
                    failed += 1
                    failure = failure or "; ".join(f"{leg}: {why}" for leg, why in sorted(result.failed_legs.items()))
                lists.append(passages_of(result, index)[:depth])
            tick(label, done)
        runs.append(SystemRun(label, SEARCH_TOOL, lists, [list(p) for p in lists], failed=failed, failure=failure))
    return runs
