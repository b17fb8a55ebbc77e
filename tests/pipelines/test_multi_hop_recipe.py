from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.embedding import Embedding
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import ConfigError
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


BRIDGE_NOTES = {
    "incident.md": "# Incident report: freezer failure, August 2024\n\nThe compressor of freezer F3 failed on a "
    "Saturday. About 1,200 filter samples collected for BLOOMCAST were spoiled.\n",
    "year2.md": "# Year 2 report (summary)\n\nProject: BLOOMCAST, forecasting algal blooms. Funder: National Marine "
    "Research Council, grant NMRC/118.\n",
    "contract.md": "# Maintenance contract\n\nFrostline Scientific services freezer F3 and freezer F4 twice a year. "
    "A failed freezer is repaired within two days.\n",
    "funding.md": "# Funding guide\n\nGrant applications go through the research office. Budgets include "
    "overheads and a data plan.\n",
    "store.md": "# Sample store\n\nFreezers F3 and F4 hold filter samples of every group. Check the alarm list.\n",
}
BRIDGE_QUESTION = "Which funder pays for the project whose samples were spoiled when the freezer failed?"


def test_the_bridge_recipe_reaches_the_note_a_bridge_name_leads_to(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in BRIDGE_NOTES.items():
        (notes / name).write_text(text)
    config = load_config()
    store = open_knowledge_store(AgragSettings(data_dir=tmp_path / "data"), config.vector_store, embedder)
    try:
        ingest_into(str(notes), config, store, embedder)
        engine = SearchEngine(store, embedder, RetrievalSettings())
        bridged = engine.search_sync(BRIDGE_QUESTION, load_recipe("bridge")).results
        titles = [r.item.title for r in bridged]  # type: ignore[union-attr]
        walked = [r.item.title for r in engine.search_sync(BRIDGE_QUESTION, MULTI_HOP).results]  # type: ignore[union-attr]
        second = "Year 2 report (summary)"  # reached through BLOOMCAST, which the incident report names
        assert any(
            t.startswith("Incident report") for t in titles[:2]
        )  # the first hop: the note the question describes
        assert titles.index(second) < walked.index(second), (titles, walked)
        assert second in titles[:4]
        assert {r.method for r in bridged} == {"ppr"}
    finally:
        store.close()


def test_a_bridge_needs_the_walk() -> None:
    with pytest.raises(ConfigError, match="bridge follows the ppr walk"):
        load_config(["recipe=chunk", "+recipe.bridge=true"])
