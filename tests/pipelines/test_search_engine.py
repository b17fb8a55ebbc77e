from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AllRetrievalMethodsFailedError, RetrievalError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.vector_payloads import chunk_payload, entity_payload
from agrag.components.stores.vector_store import VectorCollection, VectorPoint
from agrag.pipelines.config_models import RecipeConfig, RetrievalMethod
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import RetrievalSettings

HYBRID = load_recipe("hybrid")


@pytest.fixture
def engine(example_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder) -> SearchEngine:
    return SearchEngine(example_store, embedder, RetrievalSettings(rrf_k=60))


async def test_hybrid_returns_the_entity_and_the_chunk_that_answer(engine: SearchEngine) -> None:
    results = await engine.search("Who wrote the Orion Planner?", HYBRID)
    assert len(results) == HYBRID.limit
    entities = [r.item.name for r in results if isinstance(r.item, Entity)]
    chunks = [r.item for r in results if isinstance(r.item, Chunk)]
    assert "Orion Planner" in entities[:2]
    assert any("Maria Chen wrote the Orion Planner" in c.text for c in chunks[:3])
    authorship = next(c for c in chunks if "Maria Chen wrote the Orion Planner" in c.text)
    assert authorship.heading_path == ("Orion Planner Design Notes", "History and Authorship")
    assert {r.method for r in results} == {"entity", "chunk"}


async def test_results_are_fused_by_rank_and_deduplicated(engine: SearchEngine) -> None:
    response = await engine.search_with_trace("Vega Perception obstacle map", HYBRID)
    keys = [r.key for r in response.results]
    assert len(keys) == len(set(keys))
    assert all(0 < r.score <= 2 / 61 for r in response.results)
    assert [r.score for r in response.results] == sorted((r.score for r in response.results), reverse=True)
    assert [s.method for s in response.trace.methods] == ["entity", "chunk"]
    assert all(s.ok and s.count > 0 for s in response.trace.methods)
    assert response.trace.fused >= response.trace.returned == len(response.results)


async def test_the_limit_cuts_the_list(engine: SearchEngine) -> None:
    recipe = RecipeConfig(name="small", methods=(RetrievalMethod.ENTITY, RetrievalMethod.CHUNK), limit=3)
    assert len(await engine.search("Atlas Controller firmware", recipe)) == 3


async def test_a_single_method_recipe_returns_only_that_method(engine: SearchEngine) -> None:
    recipe = RecipeConfig(name="chunks", methods=(RetrievalMethod.CHUNK,), limit=5)
    results = await engine.search("replanning storm", recipe)
    assert results and all(isinstance(r.item, Chunk) and r.method == "chunk" for r in results)


async def test_an_empty_query_is_refused(engine: SearchEngine) -> None:
    with pytest.raises(RetrievalError, match="empty"):
        await engine.search("   ", HYBRID)


def failing_store(tmp_path: Path, *, entities_fail: bool, chunks_fail: bool) -> KnowledgeStore:
    """A real store whose closed shards fail every query, as a crashed or unreachable backend would."""
    chunks = QdrantEdgeVectorStore(tmp_path / "chunks", VectorCollection.CHUNKS, 384)
    entities = QdrantEdgeVectorStore(tmp_path / "entities", VectorCollection.ENTITIES, 384)
    chunk = Chunk("d.v.0", "d", "v", "Orion Planner notes", ("T",), 0, 0, 19, None, "T")
    chunks.upsert([VectorPoint(chunk.id, [1.0] + [0.0] * 383, chunk.text, chunk_payload(chunk))])
    entity = Entity("e1", "Orion Planner", "Name")
    entities.upsert([VectorPoint(entity.id, [1.0] + [0.0] * 383, entity.name, entity_payload(entity))])
    for store, fail in ((entities, entities_fail), (chunks, chunks_fail)):
        if fail:
            store.close()
    communities = QdrantEdgeVectorStore(tmp_path / "communities", VectorCollection.COMMUNITIES, 384)
    return KnowledgeStore(KuzuGraphStore(tmp_path / "g.kuzu"), chunks, entities, communities)


async def test_a_failing_method_is_recorded_while_the_others_return(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    store = failing_store(tmp_path, entities_fail=True, chunks_fail=False)
    response = await SearchEngine(store, embedder, RetrievalSettings()).search_with_trace("Orion", HYBRID)
    assert [r.item.id for r in response.results] == ["d.v.0"]
    assert response.trace.failures.keys() == {"entity"}
    assert "StoreError" in response.trace.failures["entity"]
    store.chunks.close()
    store.communities.close()
    store.graph.close()


async def test_all_methods_failing_raises(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> None:
    store = failing_store(tmp_path, entities_fail=True, chunks_fail=True)
    with pytest.raises(AllRetrievalMethodsFailedError, match="entity: StoreError") as info:
        await SearchEngine(store, embedder, RetrievalSettings()).search("Orion", HYBRID)
    assert set(info.value.failures) == {"entity", "chunk"}
    store.communities.close()
    store.graph.close()


async def test_a_search_that_finds_nothing_returns_an_empty_list(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    store = KnowledgeStore(
        KuzuGraphStore(tmp_path / "g.kuzu"),
        QdrantEdgeVectorStore(tmp_path / "c", VectorCollection.CHUNKS, 384),
        QdrantEdgeVectorStore(tmp_path / "e", VectorCollection.ENTITIES, 384),
        QdrantEdgeVectorStore(tmp_path / "k", VectorCollection.COMMUNITIES, 384),
    )
    with store:
        response = await SearchEngine(store, embedder, RetrievalSettings()).search_with_trace("anything", HYBRID)
    assert response.results == []
    assert response.trace.failures == {}
