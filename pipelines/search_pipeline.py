"""Builds the Haystack pipeline of a recipe from its fields; the components hold the algorithms.

Shape: the query embedder feeds every method; the methods run at the same time; ``fusion`` (RRF) merges them; the
optional graph walk (``bfs``) starts from the fused entity hits and also gives the passages that state it; the
optional community expansion starts from the entities found so far; ``final_fusion`` merges every list (methods,
walk, walk passages, reports) once; the optional re-rank re-orders; ``cut`` keeps ``limit`` results.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from haystack import Pipeline

from agrag.components.cutters.limit_cutter import LimitCutter
from agrag.components.data_models.query_analysis import QueryAnalyzerKind
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import ConfigError
from agrag.components.expanders.graph_bfs_expander import GraphBfsExpander
from agrag.components.expanders.graph_community_expander import GraphCommunityExpander
from agrag.components.graph.passage_graph_cache import PassageGraphCache
from agrag.components.joiners.rrf_joiner import RRFJoiner
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.retrievers.filter_conditions import IdsOfDocuments
from agrag.components.retrievers.llm_query_analyzer import LLMQueryAnalyzer
from agrag.components.retrievers.llm_text2cypher_retriever import LLMText2CypherRetriever
from agrag.components.retrievers.page_rank_chunk_retriever import PageRankChunkRetriever
from agrag.components.retrievers.qdrant_chunk_retriever import QdrantChunkRetriever
from agrag.components.retrievers.qdrant_community_retriever import QdrantCommunityRetriever
from agrag.components.retrievers.qdrant_entity_retriever import QdrantEntityRetriever
from agrag.components.retrievers.qdrant_fact_retriever import QdrantFactRetriever
from agrag.components.retrievers.rule_query_analyzer import RuleQueryAnalyzer
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_store import VectorStore
from agrag.pipelines.config_models import RecipeConfig, Reranker, RetrievalMethod
from agrag.pipelines.settings import RetrievalSettings

EMBEDDER = "query_embedder"
FUSION = "fusion"
WALK = "bfs"
WALK_FUSION = "walk_fusion"
EXPAND = "community_expand"
FINAL_FUSION = "final_fusion"
RERANK = "rerank"
CUT = "cut"
STEPS = (WALK, EXPAND, RERANK)

# Methods that take ``filters`` (text2cypher refuses every filter: see ``filter_support``).
FILTERED = {
    RetrievalMethod.ENTITY,
    RetrievalMethod.CHUNK,
    RetrievalMethod.COMMUNITY,
    RetrievalMethod.PPR,
    RetrievalMethod.FACT,
}


def recipe_parts(recipe: RecipeConfig) -> dict[str, str]:
    """The parts of ``recipe`` as ``filter_support`` names them, each with the trace entry that reports it."""
    parts = {m.value: m.value for m in recipe.methods}
    if recipe.bfs:
        parts["bfs_passages" if recipe.bfs_passages else "bfs"] = WALK
    if recipe.community_expand:
        parts[EXPAND] = EXPAND
    if recipe.reranker is not None:
        parts[recipe.reranker.value] = RERANK
    return parts


def without_parts(recipe: RecipeConfig, parts: Collection[str]) -> RecipeConfig:
    """``recipe`` without the named parts (not validated again: what is left always builds)."""
    update: dict[str, Any] = {"methods": tuple(m for m in recipe.methods if m.value not in parts)}
    if {"bfs", "bfs_passages"} & set(parts):
        update["bfs"] = False
    if EXPAND in parts:
        update["community_expand"] = False
    if recipe.reranker is not None and recipe.reranker.value in parts:
        update["reranker"] = None
    return recipe.model_copy(update=update)


@dataclass(frozen=True, slots=True)
class _Parts:
    """What the components are built from: the open stores, or the spec of each (then opened in ``warm_up``)."""

    graph: GraphStore | StoreSpec
    chunks: VectorStore | StoreSpec
    entities: VectorStore | StoreSpec
    communities: VectorStore | StoreSpec
    facts: VectorStore | StoreSpec
    entity_ids: IdsOfDocuments | StoreSpec
    community_ids: IdsOfDocuments | StoreSpec

    @classmethod
    def of(cls, store: KnowledgeStore | StoreSpec) -> _Parts:
        if isinstance(store, StoreSpec):
            return cls(store, store, store, store, store, store, store)
        graph = store.graph
        return cls(
            graph,
            store.chunks,
            store.entities,
            store.communities,
            store.facts,
            graph.entity_ids_of_documents,
            graph.community_ids_of_documents,
        )


def _method(
    method: RetrievalMethod,
    store: _Parts,
    top_k: int,
    settings: RetrievalSettings,
    llm: OpenAIChatClient | None,
    *,
    snapshots: PassageGraphCache,
    bridge: bool = False,
) -> Any:
    graph = store.graph
    if method is RetrievalMethod.ENTITY:
        return QdrantEntityRetriever(
            store.entities, top_k=top_k, ids_of_documents=store.entity_ids, names=snapshots, graph=graph
        )
    if method is RetrievalMethod.CHUNK:
        return QdrantChunkRetriever(store.chunks, top_k=top_k, graph=graph)
    if method is RetrievalMethod.COMMUNITY:
        return QdrantCommunityRetriever(store.communities, top_k=top_k, ids_of_documents=store.community_ids)
    if method is RetrievalMethod.TEXT2CYPHER:
        return LLMText2CypherRetriever(graph, llm, top_k=top_k)
    if method is RetrievalMethod.FACT:
        return QdrantFactRetriever(store.facts, top_k=top_k, graph=graph, chunks=store.chunks)
    return PageRankChunkRetriever(
        graph,
        store.chunks,
        top_k=top_k,
        damping=settings.ppr_damping,
        temperature=settings.ppr_temperature,
        snapshots=snapshots,
        entity_store=store.entities if bridge else None,
    )


def _reranker(recipe: RecipeConfig, store: _Parts, settings: RetrievalSettings) -> Any:
    # Imported here: the cross-encoder pulls in sentence-transformers' model code, which most recipes never need.
    if recipe.reranker is Reranker.NODE_DISTANCE:
        from agrag.components.rerankers.node_distance_reranker import NodeDistanceReranker  # noqa: PLC0415

        return NodeDistanceReranker(store.graph)
    from agrag.components.rerankers.cross_encoder_reranker import CrossEncoderReranker  # noqa: PLC0415

    if settings.cross_encoder_model is None:
        raise ConfigError(
            f"Recipe {recipe.name!r} re-ranks with a cross-encoder, but RETRIEVAL_CROSS_ENCODER_MODEL is not set. "
            "Set it to the folder of a sentence-transformers cross-encoder, or use a recipe without "
            "reranker: cross_encoder."
        )
    min_score = recipe.min_score if recipe.min_score is not None else settings.reranker_min_score
    return CrossEncoderReranker(
        str(settings.cross_encoder_model),
        limit=recipe.limit,
        community_slots=recipe.community_top_k,
        min_score=min_score,
    )


def query_analyzer(settings: RetrievalSettings, llm: OpenAIChatClient | None) -> RuleQueryAnalyzer | LLMQueryAnalyzer:
    """The query analyser ``settings.query_analyzer`` names: ``auto`` takes the LLM when one is configured."""
    kind = settings.query_analyzer
    if kind is QueryAnalyzerKind.RULES or (kind is QueryAnalyzerKind.AUTO and llm is None):
        return RuleQueryAnalyzer()
    return LLMQueryAnalyzer(llm, timeout_seconds=settings.query_analysis_timeout_seconds)


def needs_query_embedding(recipe: RecipeConfig) -> bool:
    """Whether a step of ``recipe`` reads the query's embedding (text2cypher alone does not)."""
    return any(m is not RetrievalMethod.TEXT2CYPHER for m in recipe.methods)


def build_search_pipeline(
    recipe: RecipeConfig,
    store: KnowledgeStore | StoreSpec,
    embedder: SentenceTransformersTextEmbedder,
    settings: RetrievalSettings,
    llm: OpenAIChatClient | None = None,
    *,
    snapshots: PassageGraphCache | None = None,
) -> Pipeline:
    """Build the pipeline for ``recipe``; components are named after the methods and the steps.

    Run it with ``Pipeline.run_async`` so the methods run at the same time. ``snapshots`` shares the in-memory
    passage graph between the pipelines of one engine (None: this pipeline builds its own).

    Built from a ``StoreSpec`` instead of the open stores, no store is opened here: each component opens (or finds,
    in a process that holds the data dir) its store in ``warm_up``. Either way ``Pipeline.dumps()`` writes the
    pipeline as YAML naming the data dir, which ``Pipeline.loads`` in another process runs with the same results.

    Raises:
        ConfigError: the recipe needs something the settings do not give (a cross-encoder model).
    """
    pipeline = Pipeline()
    parts = _Parts.of(store)
    embeds = needs_query_embedding(recipe)
    if embeds:
        pipeline.add_component(
            EMBEDDER,
            SentenceTransformersTextEmbedder(
                embedder.model, embedder.device, backend=embedder.backend, onnx_dir=embedder.onnx_dir
            ),
        )
    pipeline.add_component(FUSION, RRFJoiner(k=settings.rrf_k))
    pipeline.add_component(FINAL_FUSION, RRFJoiner(k=settings.rrf_k))
    pipeline.add_component(CUT, LimitCutter(limit=recipe.limit))
    snapshots = snapshots or PassageGraphCache(parts.graph)
    for method in recipe.methods:
        pipeline.add_component(
            method.value, _method(method, parts, recipe.limit, settings, llm, snapshots=snapshots, bridge=recipe.bridge)
        )
        if method is not RetrievalMethod.TEXT2CYPHER:
            pipeline.connect(f"{EMBEDDER}.embedding", f"{method.value}.query_embedding")
        pipeline.connect(f"{method.value}.results", f"{FUSION}.results")
        pipeline.connect(f"{method.value}.results", f"{FINAL_FUSION}.results")
    found = f"{FUSION}.results"
    if recipe.bfs:
        depth = recipe.bfs_depth or settings.traversal_depth
        chunks = parts.chunks if recipe.bfs_passages else None
        walk = GraphBfsExpander(
            parts.graph, depth=depth, per_hop=settings.traversal_per_hop, limit=recipe.limit, chunks=chunks
        )
        pipeline.add_component(WALK, walk)
        pipeline.connect(found, f"{WALK}.results")
        pipeline.connect(f"{WALK}.results", f"{FINAL_FUSION}.results")
        if recipe.bfs_passages:
            pipeline.connect(f"{EMBEDDER}.embedding", f"{WALK}.query_embedding")
            pipeline.connect(f"{WALK}.passages", f"{FINAL_FUSION}.results")
        if recipe.community_expand:  # the reports around the neighbours too
            pipeline.add_component(WALK_FUSION, RRFJoiner(k=settings.rrf_k))
            pipeline.connect(found, f"{WALK_FUSION}.results")
            pipeline.connect(f"{WALK}.results", f"{WALK_FUSION}.results")
            found = f"{WALK_FUSION}.results"
    if recipe.community_expand:
        pipeline.add_component(EXPAND, GraphCommunityExpander(parts.graph, top_k=recipe.community_top_k))
        pipeline.connect(found, f"{EXPAND}.results")
        pipeline.connect(f"{EXPAND}.results", f"{FINAL_FUSION}.results")
    last = f"{FINAL_FUSION}.results"
    if recipe.reranker is not None:
        pipeline.add_component(RERANK, _reranker(recipe, parts, settings))
        pipeline.connect(last, f"{RERANK}.results")
        last = f"{RERANK}.results"
    pipeline.connect(last, f"{CUT}.results")
    return pipeline


def pipeline_inputs(
    recipe: RecipeConfig, query: str, filters: SearchFilters | None = None
) -> dict[str, dict[str, Any]]:
    """The ``data`` argument of ``run_async`` for one query."""
    data: dict[str, dict[str, Any]] = {EMBEDDER: {"text": query}} if needs_query_embedding(recipe) else {}
    for method in recipe.methods:
        data[method.value] = {"query": query}
        if method in FILTERED and filters is not None:
            data[method.value]["filters"] = filters
    if recipe.bfs:  # the walk reads the query's words (a date seeds it only when named)
        data[WALK] = {"query": query}
    if recipe.bfs and filters is not None and not filters.empty:
        data.setdefault(WALK, {}).update(relation_types=list(filters.relation_types) or None, filters=filters)
    if recipe.community_expand and filters is not None and not filters.empty:
        data[EXPAND] = {"filters": filters}
    if recipe.reranker is Reranker.CROSS_ENCODER:
        data[RERANK] = {"query": query}
    return data
