"""``refresh_communities``: the one community refresh every flow ends with (ingest, delete, re-extract, finalize).

It runs the two Prefect tasks of ``flows/community_tasks.py``, ``communities`` (hierarchical Leiden) and ``reports``,
as real task calls, so under a flow run each shows as a task run of it in the Prefect UI. The stale mark is cleared
by the ``reports`` task only once the reports are stored, so a refresh that was killed is simply run again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows import community_tasks
from agrag.flows.community_tasks import ReportOutcome
from agrag.flows.ingest_report import IngestReport
from agrag.flows.stage_clock import StageClock, as_is
from agrag.pipelines.config_models import CommunityConfig
from agrag.pipelines.ingest_components import reports_use_llm

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class CommunityRefresh:
    """What one refresh did.

    Attributes:
        communities_by_level: Communities per level after the refresh, by level.
        reports: Reports by method, reports reused, LLM fallbacks.
    """

    communities_by_level: dict[int, int]
    reports: ReportOutcome

    @property
    def communities(self) -> int:
        """Communities after the refresh, all levels."""
        return sum(self.communities_by_level.values())

    def into(self, report: IngestReport) -> IngestReport:
        """``report`` with this refresh's communities and reports."""
        return replace(
            report,
            communities_by_level=self.communities_by_level,
            reports_by_method=self.reports.by_method,
            reports_reused=self.reports.reused,
            report_fallbacks=self.reports.fallbacks,
        )


def refresh_communities(
    touched: frozenset[str],
    *,
    store: KnowledgeStore,
    settings: CommunityConfig,
    embedder: SentenceTransformersTextEmbedder,
    llm: OpenAIChatClient | None,
    progress: bool = False,
    clock: StageClock | None = None,
    report: IngestReport | None = None,
) -> CommunityRefresh:
    """Detect communities and write their reports; only the final store writes hold ``store.writing()``.

    Communities whose members and members' text did not change (none of ``touched``) keep their reports. With a
    ``clock``, the two stages are timed and told as the ingestion's stages ``communities`` and ``reports`` are, each
    ending with its line worded from ``report`` (an ingestion's report so far) with the refresh's figures in it.

    Usage:
        ```python
        touched = community_tasks.stale_communities(store.journal)
        if touched is not None:
            done = refresh_communities(touched, store=store, settings=config.ingest.communities,
                                       embedder=embedder, llm=llm)
            print(done.communities_by_level)
        ```

    Raises:
        LLMNotConfiguredError: ``settings.reports`` is ``llm`` and ``llm`` is None.
    """
    run = clock.run if clock is not None else _now
    communities = run("communities", lambda: community_tasks.detect_communities(store, settings))
    by_level = dict(sorted(Counter(c.level for c in communities).items()))
    if clock is not None:
        clock.completed("communities", replace(report or _empty(), communities_by_level=by_level))
    report_llm = llm if reports_use_llm(settings, llm) else None
    outcome = run(
        "reports",
        lambda: community_tasks.write_reports(
            store, as_is(communities), settings, as_is(report_llm), embedder, touched=touched, progress=progress
        ),
    )
    done = CommunityRefresh(by_level, outcome)
    if clock is not None:
        clock.completed("reports", done.into(report or _empty()))
    return done


def _now(_name: str, stage: Callable[[], T]) -> T:
    return stage()


def _empty() -> IngestReport:
    return IngestReport(folder="", documents_seen=0, documents_ingested=0, documents_unchanged=0, failures=())
