"""Every search component serializes the Haystack way (``to_dict``/``from_dict``) and the copy finds the same.

Components built from the open stores write the data dir's ``StoreSpec``; the copy resolves it to the same open
stores (one open per process), so both give the same results on the example corpus.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from haystack.core.errors import SerializationError
from haystack.core.serialization import component_from_dict, component_to_dict
from haystack.utils import Secret

from agrag.components.cutters.limit_cutter import LimitCutter
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.expanders.graph_bfs_expander import GraphBfsExpander
from agrag.components.expanders.graph_community_expander import GraphCommunityExpander
from agrag.components.graph.passage_graph_cache import PassageGraphCache
from agrag.components.joiners.rrf_joiner import RRFJoiner
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.llm.openai_chat_client_spec import OpenAIChatClientSpec
from agrag.components.llm.sqlite_llm_cache import SqliteLLMCache
from agrag.components.rerankers.cross_encoder_reranker import CrossEncoderReranker
from agrag.components.rerankers.node_distance_reranker import NodeDistanceReranker
from agrag.components.retrievers.llm_text2cypher_retriever import LLMText2CypherRetriever
from agrag.components.retrievers.page_rank_chunk_retriever import PageRankChunkRetriever
from agrag.components.retrievers.qdrant_chunk_retriever import QdrantChunkRetriever
from agrag.components.retrievers.qdrant_community_retriever import QdrantCommunityRetriever
from agrag.components.retrievers.qdrant_entity_retriever import QdrantEntityRetriever
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.store_spec import StoreSpec
from agrag.pipelines.store_factory import open_store_spec

QUERY = "Who wrote the Orion Planner?"


@pytest.fixture(autouse=True)
def _trust_agrag(monkeypatch: pytest.MonkeyPatch) -> None:
    """Haystack deserializes only trusted modules; a user trusts agrag's the same way (or with allowed_modules)."""
    monkeypatch.setenv("HAYSTACK_DESERIALIZATION_ALLOWLIST", "agrag")


@pytest.fixture(scope="module")
def vector(embedder: SentenceTransformersTextEmbedder) -> Embedding:
    embedding: Embedding = embedder.run(text=QUERY)["embedding"]
    return embedding


def copied(component: Any) -> Any:
    """The component serialized as a pipeline does (its ``to_dict`` if any), through JSON, back, warmed up."""
    data = json.loads(json.dumps(component_to_dict(component, "step")))
    copy = component_from_dict(type(component), data, "step")
    assert component_to_dict(copy, "step") == component_to_dict(component, "step")
    if hasattr(copy, "warm_up"):
        copy.warm_up()
    return copy


def ranked(out: dict[str, Any], key: str = "results") -> list[tuple[str, float, str]]:
    return [(r.item.id, r.score, r.method) for r in out[key]]


def same_run(component: Any, **inputs: Any) -> dict[str, Any]:
    """Run the component and its copy with ``inputs``; they must agree. Returns the original's output."""
    out = component.run(**inputs)
    again = copied(component).run(**inputs)
    assert out["status"].ok and again["status"].ok
    for key in ("results", "passages"):
        if key in out:
            assert ranked(again, key) == ranked(out, key)
    return dict(out)


def builders(store: KnowledgeStore) -> dict[str, Callable[[], Any]]:
    graph = store.graph
    return {
        "chunk": lambda: QdrantChunkRetriever(store.chunks, top_k=5, graph=graph),
        "entity": lambda: QdrantEntityRetriever(
            store.entities,
            top_k=5,
            ids_of_documents=graph.entity_ids_of_documents,
            names=PassageGraphCache(graph),
            graph=graph,
        ),
        "community": lambda: QdrantCommunityRetriever(
            store.communities, top_k=3, ids_of_documents=graph.community_ids_of_documents
        ),
        "ppr": lambda: PageRankChunkRetriever(graph, store.chunks, top_k=5, damping=0.6, temperature=0.2),
    }


@pytest.mark.parametrize("name", ["chunk", "entity", "community", "ppr"])
def test_a_retriever_and_its_copy_find_the_same(name: str, example_store: KnowledgeStore, vector: Embedding) -> None:
    found = same_run(builders(example_store)[name](), query=QUERY, query_embedding=vector)
    assert found["results"], name


def test_a_copy_keeps_to_document_filters(example_store: KnowledgeStore, vector: Embedding) -> None:
    document = example_store.graph.documents(None, offset=0, limit=1)[0].id
    filters = SearchFilters(document_ids=(document,))
    for name in ("chunk", "entity", "community", "ppr"):
        same_run(builders(example_store)[name](), query=QUERY, query_embedding=vector, filters=filters)


def test_the_serialized_form_names_the_data_dir_and_no_live_object(example_store: KnowledgeStore) -> None:
    data = QdrantEntityRetriever(
        example_store.entities, ids_of_documents=example_store.graph.entity_ids_of_documents
    ).to_dict()
    spec = data["init_parameters"]["store"]
    assert spec["type"] == "agrag.components.stores.store_spec.StoreSpec"
    assert example_store.spec is not None
    assert spec["init_parameters"]["data_dir"] == example_store.spec.data_dir
    assert data["init_parameters"]["ids_of_documents"] == spec
    assert data["init_parameters"]["graph"] is None


def test_the_graph_steps_and_their_copies_agree(example_store: KnowledgeStore, vector: Embedding) -> None:
    graph = example_store.graph
    seeds = QdrantEntityRetriever(example_store.entities, top_k=5).run(query=QUERY, query_embedding=vector)
    walked = same_run(
        GraphBfsExpander(graph, depth=2, per_hop=5, limit=8, chunks=example_store.chunks),
        results=seeds["results"],
        query_embedding=vector,
    )
    assert walked["results"] and walked["passages"]
    same_run(GraphCommunityExpander(graph, top_k=2), results=seeds["results"])
    same_run(NodeDistanceReranker(graph, top_entities=2, max_depth=2), results=seeds["results"])


def test_stateless_steps_round_trip(tmp_path: Path) -> None:
    assert copied(RRFJoiner(k=17)).k == 17
    assert copied(LimitCutter(limit=4)).limit == 4
    model = tmp_path / "cross-encoder"
    reranker = CrossEncoderReranker(str(model), limit=7, community_slots=2, min_score=0.5, batch_size=8)
    # not warmed up: there is no model in the folder
    copy = component_from_dict(CrossEncoderReranker, component_to_dict(reranker, "rerank"), "rerank")
    assert (copy.model_dir, copy.limit, copy.community_slots, copy.min_score, copy.batch_size) == (
        str(model), 7, 2, 0.5, 8
    )  # fmt: skip
    data = component_to_dict(SentenceTransformersTextEmbedder(batch_size=16), "embedder")
    embedder = component_from_dict(SentenceTransformersTextEmbedder, data, "embedder")  # the model loads in warm_up
    assert (embedder.model, embedder.batch_size) == ("all-MiniLM-L6-v2", 16)


def test_text2cypher_writes_its_llm_settings_and_the_key_variable_never_the_key(
    example_store: KnowledgeStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = OpenAIChatClient(
        "http://127.0.0.1:9/v1",
        "scripted",
        "sk-secret-value",
        timeout_seconds=7,
        max_retries=1,
        max_tokens=99,
        cache=SqliteLLMCache(tmp_path / "cache.sqlite"),
    )
    retriever = LLMText2CypherRetriever(example_store.graph, client, top_k=4)
    text = json.dumps(retriever.to_dict())
    assert "sk-secret-value" not in text
    llm = retriever.to_dict()["init_parameters"]["llm"]["init_parameters"]
    assert llm["api_key"] == Secret.from_env_var("AGRAG_LLM_API_KEY", strict=False).to_dict()
    monkeypatch.setenv("AGRAG_LLM_API_KEY", "sk-from-the-environment")
    copy = copied(retriever)
    assert copy.llm is not None and copy.graph is example_store.graph
    opened = copy.llm
    assert (opened.base_url, opened.model, opened.timeout_seconds, opened.max_retries, opened.max_tokens) == (
        "http://127.0.0.1:9/v1", "scripted", 7, 1, 99
    )  # fmt: skip
    assert opened.cache is not None and opened.cache.path == tmp_path / "cache.sqlite"
    assert opened._client.api_key == "sk-from-the-environment"
    assert copied(LLMText2CypherRetriever(example_store.graph, None)).llm is None


def test_a_chat_client_spec_round_trips() -> None:
    spec = OpenAIChatClientSpec("http://x/v1", "m", Secret.from_env_var("MY_KEY"), temperature=0.3)
    assert OpenAIChatClientSpec.from_dict(spec.to_dict()) == spec


def test_a_store_spec_round_trips_with_its_opener_and_key_variable() -> None:
    spec = StoreSpec(
        "relative/data",
        "all-MiniLM-L6-v2",
        rrf_k=30,
        vector_backend="qdrant",  # type: ignore[arg-type]
        qdrant_url="http://localhost:6333",
        collection_prefix="team",
        qdrant_api_key=Secret.from_env_var("AGRAG_QDRANT_API_KEY", strict=False),
        opener=open_store_spec,
    )
    assert Path(spec.data_dir).is_absolute()
    copy = StoreSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert copy == spec and copy.opener is open_store_spec


def test_a_store_opened_by_hand_has_no_spec_to_write(example_store: KnowledgeStore, tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")  # not opened from a data dir: no other process could open it
    try:
        with pytest.raises(SerializationError, match=r"QdrantChunkRetriever cannot be serialized.*StoreSpec"):
            QdrantChunkRetriever(example_store.chunks, graph=graph).to_dict()
    finally:
        graph.close()
    with pytest.raises(SerializationError, match="QdrantCommunityRetriever"):
        QdrantCommunityRetriever(example_store.communities, ids_of_documents=lambda ids: ids).to_dict()


def test_a_result_list_survives_the_copy_unchanged(example_store: KnowledgeStore, vector: Embedding) -> None:
    out = QdrantChunkRetriever(example_store.chunks, top_k=3).run(query=QUERY, query_embedding=vector)
    results: list[SearchResult] = out["results"]
    assert copied(LimitCutter(limit=2)).run(results=results)["results"] == results[:2]
