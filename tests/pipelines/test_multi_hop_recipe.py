from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.embedding import Embedding
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.retrievers.page_rank_chunk_retriever import PageRankChunkRetriever
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import AgragSettings, RetrievalSettings
from agrag.pipelines.store_factory import open_knowledge_store

MULTI_HOP = load_recipe("multi_hop")


@pytest.fixture
def engine(example_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder) -> SearchEngine:
    return SearchEngine(example_store, embedder, RetrievalSettings())


async def test_multi_hop_walks_from_the_named_entity_to_passages_about_it(engine: SearchEngine) -> None:
    response = await engine.search_with_trace("Who wrote the Orion Planner?", MULTI_HOP)
    chunks = [r.item for r in response.results]
    assert all(isinstance(c, Chunk) for c in chunks)
    assert len(chunks) == MULTI_HOP.limit
    assert {r.method for r in response.results} == {"ppr"}
    assert any("Maria Chen wrote the Orion Planner" in c.text for c in chunks[:3])  # type: ignore[union-attr]
    assert [s.method for s in response.trace.methods] == ["ppr"]
    assert response.trace.methods[0].ok


async def test_a_query_naming_no_entity_is_ranked_by_similarity(engine: SearchEngine) -> None:
    results = await engine.search("why did robots stop moving for twenty minutes", MULTI_HOP)
    assert results
    assert "stopped moving" in results[0].item.text  # type: ignore[union-attr]


def test_the_graph_snapshot_is_reread_only_after_a_write(
    tmp_path: Path, examples: Path, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> None:
    config = load_config()
    store = open_knowledge_store(AgragSettings(data_dir=tmp_path / "data"), config.vector_store, embedder)
    try:
        ingest_into(str(examples), config, store, embedder)
        retriever = PageRankChunkRetriever(store.graph, store.chunks, top_k=3)
        first = retriever.graph()
        assert retriever.graph() is first
        (tmp_path / "more").mkdir()
        (tmp_path / "more" / "new.md").write_text("# Kestrel Arm\n\nThe Kestrel Arm was built by Maria Chen.\n")
        ingest_into(str(tmp_path / "more"), config, store, embedder)
        assert retriever.graph() is not first
        vector = Embedding(tuple(embedder.embed_batch(["Who built the Kestrel Arm?"])[0]))
        results = retriever.run(query="Who built the Kestrel Arm?", query_embedding=vector)["results"]
        assert "Kestrel Arm was built" in results[0].item.text  # type: ignore[index]
    finally:
        store.close()
