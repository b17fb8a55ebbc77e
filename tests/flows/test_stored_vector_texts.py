"""Ingestion stores, for chunks, entities and community reports, the vectors of the shared embedding-text builders."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agrag.components.embedders.embedding_texts import (
    chunk_embedding_text,
    community_report_text,
    entity_embedding_text,
)
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_store import VectorStore
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES


def _cosine(u: Sequence[float], v: Sequence[float]) -> float:
    return sum(a * b for a, b in zip(u, v, strict=True)) / (math.hypot(*u) * math.hypot(*v))


def _stored_vs(
    target: VectorStore, embedder: SentenceTransformersTextEmbedder, texts: dict[str, str]
) -> Callable[[str], float]:
    """Cosine of each stored point's vector with the vector of ``texts[id]`` embedded now."""
    stored = {p.id: p.dense for p in target.fetch(sorted(texts), with_vectors=True)}
    assert set(stored) == set(texts), "every item has a stored point"
    fresh = dict(zip(sorted(texts), embedder.embed_batch([texts[i] for i in sorted(texts)]), strict=True))
    return lambda item_id: _cosine(stored[item_id], fresh[item_id])


@pytest.mark.slow
def test_ingested_vectors_are_computed_from_the_builders_texts(
    prefect_harness: None, tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    config = load_config()
    settings = AgragSettings(data_dir=tmp_path / "data", _env_file=None)
    with open_knowledge_store(settings, config.vector_store, embedder) as store:
        ingest_into(str(EXAMPLES), config, store, embedder)
        _check(store, embedder)


def _check(store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder) -> None:
    chunks = store.graph.get_chunks(store.graph.searchable_chunk_ids())
    entities = [entity for entity, _merged in store.graph.all_entities()]
    communities = store.graph.communities()
    assert len(chunks) > 40 and len(entities) > 20 and len(communities) >= 2
    assert all(c.report is not None and c.report.findings for c in communities), "findings are part of the text"

    chunk_cosine = _stored_vs(store.chunks, embedder, {c.id: chunk_embedding_text(c) for c in chunks})
    entity_cosine = _stored_vs(store.entities, embedder, {e.id: entity_embedding_text(e) for e in entities})
    community_cosine = _stored_vs(store.communities, embedder, {c.id: community_report_text(c) for c in communities})
    assert min(chunk_cosine(c.id) for c in chunks) > 0.9999
    assert min(entity_cosine(e.id) for e in entities) > 0.9999
    assert min(community_cosine(c.id) for c in communities) > 0.9999

    # The check tells texts apart: a chunk's bare text, or a report without its findings, is another vector.
    headed = next(c for c in chunks if chunk_embedding_text(c) != c.text)
    assert _stored_vs(store.chunks, embedder, {headed.id: headed.text})(headed.id) < 0.999
    community = communities[0]
    assert community.report is not None
    bare = f"{community.report.title}\n{community.report.summary}"
    assert _stored_vs(store.communities, embedder, {community.id: bare})(community.id) < 0.999
