import json
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.query_analysis import AnswerType, QueryAnalyzerKind
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AllRetrievalMethodsFailedError, ConfigError, RetrievalError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.vector_payloads import chunk_payload, entity_payload
from agrag.components.stores.vector_store import VectorCollection, VectorPoint
from agrag.pipelines.config_models import RecipeConfig, RetrievalMethod
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import RetrievalSettings
from tests.support.scripted_llm import scripted_llm

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


async def test_the_trace_carries_the_query_analysis(engine: SearchEngine) -> None:
    response = await engine.search_with_trace("Who wrote the Orion Planner?", HYBRID)
    analysis = response.trace.analysis
    assert analysis is not None and analysis.analyzer is QueryAnalyzerKind.RULES and analysis.error == ""
    assert analysis.answer_type is AnswerType.PERSON
    assert (analysis.entity_hints, analysis.relation_keywords) == (("Orion Planner",), ("wrote",))


async def test_the_llm_analysis_goes_on_the_trace_and_leaves_the_ranking_alone(
    example_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder, engine: SearchEngine
) -> None:
    question = "Who wrote the Orion Planner?"
    answer = {"answer_type_keywords": ["Person"], "entities_from_query": ["Orion"], "relation_keywords": ["authored"]}
    settings = RetrievalSettings(rrf_k=60, query_analyzer=QueryAnalyzerKind.LLM, query_analysis_timeout_seconds=5)
    with scripted_llm(lambda messages: json.dumps(answer)) as server:
        llm = OpenAIChatClient(server.base_url, "scripted", max_retries=0)
        response = await SearchEngine(example_store, embedder, settings, llm=llm).search_with_trace(question, HYBRID)
    assert response.trace.analysis is not None and response.trace.analysis.analyzer is QueryAnalyzerKind.LLM
    assert response.trace.analysis.entity_hints == ("Orion",)
    assert response.results == (await engine.search_with_trace(question, HYBRID)).results


async def test_a_failing_llm_analysis_is_recorded_and_the_search_returns(
    example_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    with scripted_llm(lambda messages: "no JSON today", fail_first=1) as server:
        llm = OpenAIChatClient(server.base_url, "scripted", max_retries=0)
        settings = RetrievalSettings(query_analyzer=QueryAnalyzerKind.AUTO)  # the LLM, since one is configured
        engine = SearchEngine(example_store, embedder, settings, llm=llm)
        response = await engine.search_with_trace("Who wrote the Orion Planner?", HYBRID)
    analysis = response.trace.analysis
    assert response.results and analysis is not None and analysis.analyzer is QueryAnalyzerKind.RULES
    assert analysis.error.startswith("LLMError: The LLM at http://127.0.0.1") and analysis.entity_hints == (
        "Orion Planner",
    )


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
    facts = QdrantEdgeVectorStore(tmp_path / "facts", VectorCollection.FACTS, 384)
    return KnowledgeStore(KuzuGraphStore(tmp_path / "g.kuzu"), chunks, entities, communities, facts)


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
    store.facts.close()
    store.graph.close()


async def test_all_methods_failing_raises(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> None:
    store = failing_store(tmp_path, entities_fail=True, chunks_fail=True)
    with pytest.raises(AllRetrievalMethodsFailedError, match="entity: StoreError") as info:
        await SearchEngine(store, embedder, RetrievalSettings()).search("Orion", HYBRID)
    assert set(info.value.failures) == {"entity", "chunk"}
    store.communities.close()
    store.facts.close()
    store.graph.close()


async def test_a_search_that_finds_nothing_returns_an_empty_list(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    store = KnowledgeStore(
        KuzuGraphStore(tmp_path / "g.kuzu"),
        QdrantEdgeVectorStore(tmp_path / "c", VectorCollection.CHUNKS, 384),
        QdrantEdgeVectorStore(tmp_path / "e", VectorCollection.ENTITIES, 384),
        QdrantEdgeVectorStore(tmp_path / "k", VectorCollection.COMMUNITIES, 384),
        QdrantEdgeVectorStore(tmp_path / "f", VectorCollection.FACTS, 384),
    )
    with store:
        response = await SearchEngine(store, embedder, RetrievalSettings()).search_with_trace("anything", HYBRID)
    assert response.results == []
    assert response.trace.failures == {}


def test_the_rules_analyse_queries_unless_the_settings_choose_the_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    from agrag.components.retrievers.llm_query_analyzer import LLMQueryAnalyzer
    from agrag.components.retrievers.rule_query_analyzer import RuleQueryAnalyzer
    from agrag.pipelines.search_pipeline import query_analyzer
    from agrag.pipelines.settings import load_retrieval_settings

    llm = OpenAIChatClient("http://127.0.0.1:9/v1", "scripted")
    monkeypatch.delenv("RETRIEVAL_QUERY_ANALYZER", raising=False)
    assert isinstance(query_analyzer(load_retrieval_settings(), llm), RuleQueryAnalyzer), "rules by default"
    monkeypatch.setenv("RETRIEVAL_QUERY_ANALYZER", "auto")
    assert isinstance(query_analyzer(load_retrieval_settings(), llm), LLMQueryAnalyzer)
    assert isinstance(query_analyzer(load_retrieval_settings(), None), RuleQueryAnalyzer), "auto without an LLM"
    monkeypatch.setenv("RETRIEVAL_QUERY_ANALYZER", "llm")
    assert isinstance(query_analyzer(load_retrieval_settings(), None), LLMQueryAnalyzer), "llm records why it fell back"
    monkeypatch.setenv("RETRIEVAL_QUERY_ANALYZER", "spacy")
    with pytest.raises(ConfigError, match="RETRIEVAL_QUERY_ANALYZER"):
        load_retrieval_settings()
