"""The delete flow: take one document's contribution out of the graph, keeping its text readable by id."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prefect import flow

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows import ingest_tasks as tasks
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.config_models import AgragConfig
from agrag.pipelines.ingest_components import llm_client, reports_use_llm
from agrag.pipelines.settings import load_agrag_settings, load_retrieval_settings
from agrag.pipelines.store_factory import open_knowledge_store


@dataclass(frozen=True, slots=True)
class DeleteReport:
    """What deleting one document did.

    Attributes:
        document_id: The document deleted.
        chunks_retired: Its chunks, of every version (still readable by id, marked superseded).
        entities_removed: Entities no other document supports, now out of the graph and out of search.
        communities: Communities after the hierarchy was recomputed.
    """

    document_id: str
    chunks_retired: int
    entities_removed: int
    communities: int


def delete_from(
    document_id: str,
    config: AgragConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    llm: OpenAIChatClient | None = None,
) -> DeleteReport:
    """Delete ``document_id`` from open stores, keeping its text readable by id.

    Its support of relations, the entities only it supported and their community memberships go; the communities
    are recomputed, and only those around what it touched get new reports. Deleting again completes a delete that
    was killed half-way.

    Raises:
        DocumentNotFoundError: no stored document has this id.
    """
    retired = store.graph.delete_document(document_id)
    retirement = store.retire_chunks(retired)
    touched = frozenset(retirement.touched)
    if store.journal is not None:
        touched = tasks.mark_communities_stale(store.journal, set(touched))
    communities = 0
    settings = config.ingest.communities
    if settings.enabled:
        found = tasks.detect_communities.fn(store, settings)
        report_llm = llm if reports_use_llm(settings, llm) else None
        tasks.write_reports.fn(store, found, settings, report_llm, embedder, touched=touched)
        communities = len(found)
    return DeleteReport(document_id, len(retired), len(retirement.removed), communities)


@flow(name="agrag-delete")
def delete_flow(document_id: str, overrides: list[str] | None = None, data_dir: str | None = None) -> DeleteReport:
    """Delete one document from the data dir of ``AGRAG_DATA_DIR`` (or ``data_dir``); see ``delete_from``."""
    config = load_config(list(overrides or []))
    settings = load_agrag_settings()
    if data_dir is not None:
        settings = settings.model_copy(update={"data_dir": Path(data_dir)})
    embedder = SentenceTransformersTextEmbedder(config.embedder.model, config.embedder.device)
    llm = llm_client(settings)
    with open_knowledge_store(settings, config.vector_store, embedder, load_retrieval_settings()) as store:
        return delete_from(document_id, config, store, embedder, llm)
