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
from agrag.components.reporters.extractive_community_reporter import ExtractiveCommunityReporter, ratings_of
from agrag.components.reporters.llm_community_reporter import LLMCommunityReporter
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.vector_payloads import community_payload
from agrag.components.stores.vector_store import VectorPoint
from agrag.flows.progress import progress_bar
from agrag.pipelines.config_models import CommunityConfig

COMMUNITIES_STALE = PhaseKey(GRAPH_SUBJECT, "communities-stale", "")
# Distinct member entities whose report inputs are read at once (``report_batches``). Every batch reads and splits
# the sentences of the chunks naming its members, and on a Zipf corpus most chunks name a member of every batch: at
# 100,000 chunks (151,000 entities) two batches of 100,000 members took the reports stage from 141 to 213 s (about
# 10 s of it a grouping since made linear). One batch holds every corpus up to about 150,000 chunks; at 1,000,000
# (624,084 entities) there were three, of 28, 17 and 5 minutes, in a process that peaked at 18.0 GB.
REPORT_BATCH_MEMBERS = 250_000


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
    reported: list[Community] = []
    importance: list[float] = []
    fallbacks = 0
    extractive = ExtractiveCommunityReporter(sentences=config.report_sentences)
    batches = report_batches(todo, communities, REPORT_BATCH_MEMBERS)
    everyone = sorted({e for c in todo for e in c.entity_ids}) if len(batches) > 1 else []
    # several batches: each reads its own members' inputs, but sentences are read for every member's name
    names = [(e.name, e.id) for e in store.graph.get_entities(everyone)] if everyone else None
    with progress_bar(progress and llm is not None, len(todo), "LLM community reports", "report") as tick:
        reporter = extractive if llm is None else LLMCommunityReporter(llm, fallback=extractive, progress=tick)
        for batch in batches:
            members = sorted({e for c in batch for e in c.entity_ids})
            inputs = store.graph.community_inputs(members, everyone or None)
            out = reporter.run(batch, *inputs, names=names)
            reported += out["communities"]
            importance += out["importance"]
            fallbacks += int(out.get("fallbacks", 0))
    written = {c.id: c for c in _rated(reported, importance)}
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


def report_batches(todo: list[Community], every: list[Community], members: int) -> list[list[Community]]:
    """``todo`` in batches of at most ``members`` distinct member entities (a larger community alone in one).

    Each batch's inputs (entities, relations, the chunks naming them) are read and reported on, then dropped: at
    1,000,000 chunks the inputs of every community at once are most of the graph in memory. Communities are taken
    top-level ancestor by ancestor (ancestry from ``every``), so a batch holds one part of the hierarchy, whose
    lower levels add no members to their ancestors'.
    """
    parents = {c.id: c.parent_id for c in every}

    def root(community: Community) -> str:
        current, seen = community.id, set()
        while (parent := parents.get(current)) is not None and parent not in seen:
            seen.add(current)
            current = parent
        return current

    batches: list[list[Community]] = []
    held: set[str] = set()
    for community in sorted(todo, key=lambda c: (root(c), c.level, c.id)):
        new = {e for e in community.entity_ids if e not in held}
        if batches and len(held) + len(new) <= max(members, len(held)):  # within, or nothing more to read
            batches[-1].append(community)
            held.update(new)
        else:
            batches.append([community])
            held = set(community.entity_ids)
    return batches


def _rated(reported: list[Community], importance: list[float]) -> list[Community]:
    """Extractive reports rated on one scale over every batch (``ratings_of``), as if written in one call."""
    ratings = ratings_of(importance)
    return [
        replace(c, report=replace(c.report, rating=rating))
        if c.report is not None and c.report.method is ReportMethod.EXTRACTIVE
        else c
        for c, rating in zip(reported, ratings, strict=True)
    ]
