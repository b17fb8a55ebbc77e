"""The community stages as Prefect tasks: hierarchical Leiden, then a report per community; and the stale mark.

A write that touches entities marks the communities around them stale in the phase journal before it commits, so a
run killed after the commit still refreshes them; the reports stage clears the mark.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from prefect import task
from prefect.cache_policies import NO_CACHE

from agrag.components.communities.leiden_community_detector import LeidenCommunityDetector
from agrag.components.data_models.community import Community, ReportMethod
from agrag.components.data_models.phase_key import GRAPH_SUBJECT, PhaseKey
from agrag.components.embedders.embedding_texts import community_report_text
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.reporters.extractive_community_reporter import ExtractiveCommunityReporter
from agrag.components.reporters.llm_community_reporter import LLMCommunityReporter
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.vector_payloads import community_payload
from agrag.components.stores.vector_store import VectorPoint
from agrag.flows.progress import progress_bar
from agrag.pipelines.config_models import CommunityConfig

COMMUNITIES_STALE = PhaseKey(GRAPH_SUBJECT, "communities-stale", "")


def mark_communities_stale(journal: SqlitePhaseJournal, touched: set[str]) -> frozenset[str]:
    """Record that the graph changed around ``touched`` entities; return every entity touched since the last refresh.

    Communities around them, and their reports, must be redone.
    """
    stale = (stale_communities(journal) or frozenset()) | touched
    journal.save(COMMUNITIES_STALE, stale)
    return stale


def stale_communities(journal: SqlitePhaseJournal) -> frozenset[str] | None:
    """The entities touched since communities were last refreshed, or None when they are up to date."""
    touched: frozenset[str] | None = journal.load(COMMUNITIES_STALE)
    return touched


@task(name="communities", cache_policy=NO_CACHE, persist_result=False)
def detect_communities(store: KnowledgeStore, config: CommunityConfig) -> list[Community]:
    """Hierarchical Leiden over the resolved entity graph."""
    entity_ids, edges = store.graph.entity_graph()
    detector = LeidenCommunityDetector(
        max_levels=config.max_levels,
        max_cluster_size=config.max_cluster_size,
        min_size=config.min_size,
        resolution=config.resolution,
        seed=config.seed,
    )
    communities: list[Community] = detector.run(entity_ids=entity_ids, edges=edges)["communities"]
    return communities


@dataclass(frozen=True, slots=True)
class ReportOutcome:
    """How the reports stage went: reports by method, reused reports, and LLM fallbacks."""

    by_method: dict[str, int]
    reused: int
    fallbacks: int


@task(name="reports", cache_policy=NO_CACHE, persist_result=False)
def write_reports(
    store: KnowledgeStore,
    communities: list[Community],
    config: CommunityConfig,
    llm: OpenAIChatClient | None,
    embedder: SentenceTransformersTextEmbedder,
    *,
    touched: frozenset[str] = frozenset(),
    progress: bool = False,
) -> ReportOutcome:
    """Report on every community, embed the reports, and store the hierarchy in place of the previous one.

    A community whose members did not change and none of whose members' text changed (``touched``) keeps its
    stored report: no LLM call, no new sentence picking. Only the store writes, at the end, hold
    ``store.writing()``. Finishing clears the journal's stale mark.
    """
    previous = {c.id: c for c in store.graph.communities()}
    wanted_method = ReportMethod.LLM if llm is not None else ReportMethod.EXTRACTIVE
    reused = {
        c.id
        for c in communities
        if (old := previous.get(c.id))
        and old.report
        and old.report.method == wanted_method
        and touched.isdisjoint(c.entity_ids)
    }
    todo = [c for c in communities if c.id not in reused]
    fallbacks = 0
    written: dict[str, Community] = {}
    if todo:
        entities, relations, chunks, mentions = store.graph.community_inputs(
            sorted({e for c in todo for e in c.entity_ids})
        )
        extractive = ExtractiveCommunityReporter(sentences=config.report_sentences)
        if llm is None:
            reported = extractive.run(todo, entities, relations, chunks, mentions)["communities"]
        else:
            with progress_bar(progress, len(todo), "LLM community reports", "report") as tick:
                reporter = LLMCommunityReporter(llm, fallback=extractive, progress=tick)
                out = reporter.run(todo, entities, relations, chunks, mentions)
            reported, fallbacks = out["communities"], int(out["fallbacks"])
        written = {c.id: c for c in reported}
    final = [written.get(c.id) or replace(c, report=previous[c.id].report) for c in communities]
    texts = [community_report_text(c) for c in final]
    vectors = embedder.embed_batch(texts) if final else []
    with store.writing():  # the reports were written and embedded above, outside it: only the writes wait here
        store.communities.upsert(
            [VectorPoint(c.id, v, t, community_payload(c)) for c, v, t in zip(final, vectors, texts, strict=True)]
        )
        store.communities.delete(sorted(set(previous) - {c.id for c in final}))
        store.graph.replace_communities(final)
    if store.journal is not None:
        store.journal.forget([GRAPH_SUBJECT], COMMUNITIES_STALE.phase)
    return ReportOutcome(dict(Counter(str(c.report.method) for c in final if c.report)), len(reused), fallbacks)
