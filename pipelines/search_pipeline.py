"""Builds the Haystack pipeline of a recipe: embed the query, run the methods concurrently, fuse, cut."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from haystack import Pipeline

from agrag.components.cutters.limit_cutter import LimitCutter
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.joiners.rrf_joiner import RRFJoiner
from agrag.components.retrievers.page_rank_chunk_retriever import PageRankChunkRetriever
from agrag.components.retrievers.qdrant_chunk_retriever import QdrantChunkRetriever
from agrag.components.retrievers.qdrant_entity_retriever import QdrantEntityRetriever
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.config_models import RecipeConfig, RetrievalMethod
from agrag.pipelines.settings import RetrievalSettings

EMBEDDER = "query_embedder"
FUSION = "fusion"
CUT = "cut"

MethodFactory = Callable[[KnowledgeStore, int, RetrievalSettings], Any]  # returns a Haystack component

METHODS: dict[RetrievalMethod, MethodFactory] = {
    RetrievalMethod.ENTITY: lambda store, top_k, _: QdrantEntityRetriever(store.entities, top_k=top_k),
    RetrievalMethod.CHUNK: lambda store, top_k, _: QdrantChunkRetriever(store.chunks, top_k=top_k),
    RetrievalMethod.PPR: lambda store, top_k, settings: PageRankChunkRetriever(
        store.graph, store.chunks, top_k=top_k, damping=settings.ppr_damping, temperature=settings.ppr_temperature
    ),
}


def build_search_pipeline(
    recipe: RecipeConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    settings: RetrievalSettings,
) -> Pipeline:
    """Build the pipeline for ``recipe``; its components are named after the methods (``entity``, ``chunk``).

    Every method component takes ``query`` and gets the query embedding from ``query_embedder``; run it with
    ``Pipeline.run_async`` so the methods run at the same time.
    """
    pipeline = Pipeline()
    pipeline.add_component(EMBEDDER, SentenceTransformersTextEmbedder(embedder.model, embedder.device))
    pipeline.add_component(FUSION, RRFJoiner(k=settings.rrf_k))
    pipeline.add_component(CUT, LimitCutter(limit=recipe.limit))
    for method in recipe.methods:
        pipeline.add_component(method.value, METHODS[method](store, recipe.limit, settings))
        pipeline.connect(f"{EMBEDDER}.embedding", f"{method.value}.query_embedding")
        pipeline.connect(f"{method.value}.results", f"{FUSION}.results")
    pipeline.connect(f"{FUSION}.results", f"{CUT}.results")
    return pipeline


def pipeline_inputs(recipe: RecipeConfig, query: str) -> dict[str, dict[str, object]]:
    """The ``data`` argument of ``run_async`` for one query."""
    data: dict[str, dict[str, object]] = {EMBEDDER: {"text": query}}
    for method in recipe.methods:
        data[method.value] = {"query": query}
    return data
