"""``finalize``: rebuild stale communities and reports on their own (``flows/community_refresh.py`` does the work).

With ``ingest.finalize=manual`` an ingestion writes chunks, entities, relations and vectors but leaves the
communities stale (the journal's ``communities-stale`` mark, as a killed run would); ``finalize_into`` (``agrag
finalize``) then detects communities and writes their reports once, for every ingestion since the last refresh.
"""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import StoreError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows import community_tasks
from agrag.flows.community_refresh import refresh_communities
from agrag.flows.index_task import index_vectors
from agrag.flows.ingest_control import IngestControl
from agrag.flows.ingest_report import index_line
from agrag.flows.stage_clock import StageClock
from agrag.pipelines.config_models import AgragConfig

DEFERRED = "deferred (ingest.finalize=manual): run `agrag finalize` to rebuild communities and reports"
NOTHING_STALE = "nothing to finalize: the communities and reports are up to date"
COMMUNITIES_OFF = "communities are off (ingest.communities.enabled=false): nothing to finalize"


@dataclass(frozen=True, slots=True)
class FinalizeReport:
    """What ``finalize`` did.

    Attributes:
        finalized: Whether communities were stale and were rebuilt (False: nothing to do, or communities are off).
        message: One line for people: what was done, or why nothing was.
        touched: Entities touched since the last refresh (whose communities' reports were redone).
        communities_by_level: Communities per level after the run.
        reports_by_method: Reports by method (llm, extractive).
        reports_reused: Reports kept because their community did not change.
        stage_seconds: Wall time of each stage.
    """

    finalized: bool
    message: str
    touched: int = 0
    communities_by_level: dict[int, int] | None = None
    reports_by_method: dict[str, int] | None = None
    reports_reused: int = 0
    stage_seconds: dict[str, float] | None = None


def finalize_into(
    config: AgragConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    *,
    llm: OpenAIChatClient | None = None,
    progress: bool = False,
    control: IngestControl | None = None,
) -> FinalizeReport:
    """Rebuild the communities and their reports if ingestions left them stale; else do nothing and say so.

    Either way, vector collections with points waiting to be indexed for search are indexed (the ``index`` stage).

    Runs the same stages an ``on_write`` ingestion runs at its end (``ingest.communities`` settings), on the
    entities every ingestion since the last refresh touched. Resumable: the stale mark is cleared only when the
    reports are stored, so a finalize that was killed is simply run again. ``control`` is told as each stage starts
    and ends, and checked before each (``flows/finalize_run.py`` runs this as the ``agrag-finalize`` flow).

    Raises:
        StoreError: ``store`` was opened without a phase journal.
        LLMNotConfiguredError: ``ingest.communities.reports=llm`` and ``llm`` is None.
        IngestInterruptedError: ``control`` was cancelled; the communities stay stale until finalize runs again.
    """
    if store.journal is None:
        raise StoreError("Finalize needs the store's phase journal; open the store with open_knowledge_store.")
    clock = StageClock(control)
    touched = community_tasks.stale_communities(store.journal)
    if touched is None or not config.ingest.communities.enabled:
        indexed = index_vectors(store, clock)  # a data dir written before the index stage existed gets it here
        message = NOTHING_STALE if touched is None else COMMUNITIES_OFF
        return FinalizeReport(
            False,
            message if indexed is None else f"{message}; {index_line(indexed)}",
            len(touched or ()),
            stage_seconds=dict(clock.seconds) or None,
        )
    settings = config.ingest.communities
    done = refresh_communities(
        touched, store=store, settings=settings, embedder=embedder, llm=llm, progress=progress, clock=clock
    )
    indexed = index_vectors(store, clock)
    levels = ", ".join(f"level {level}: {n}" for level, n in done.communities_by_level.items()) or "none"
    return FinalizeReport(
        True,
        f"finalized: communities rebuilt around {len(touched)} touched entities ({levels})"
        + (f"; {index_line(indexed)}" if indexed is not None else ""),
        len(touched),
        done.communities_by_level,
        done.reports.by_method,
        done.reports.reused,
        dict(clock.seconds),
    )
