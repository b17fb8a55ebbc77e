"""``SearchEngine``: runs recipes over a knowledge store."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from haystack import Pipeline
from haystack.core.errors import PipelineRuntimeError

from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.data_models.search_trace import SearchTrace
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AllRetrievalMethodsFailedError, RetrievalError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.retrievers.filter_conditions import check_properties
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.config_models import RecipeConfig
from agrag.pipelines.search_pipeline import CUT, FUSION, STEPS, build_search_pipeline, pipeline_inputs
from agrag.pipelines.settings import RetrievalSettings, load_retrieval_settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """Results of a search and the trace of how they were found."""

    results: list[SearchResult]
    trace: SearchTrace


class SearchEngine:
    """Runs a recipe: its methods at the same time, Reciprocal Rank Fusion, then the cut to ``recipe.limit``.

    A failing method is logged and recorded on the trace while the others return; if every method fails,
    ``AllRetrievalMethodsFailedError`` is raised. An empty list means the search ran and found nothing.

    Usage:
        ```python
        engine = SearchEngine(graph_store=store, embedder=embedder)
        results = await engine.search("Who wrote the Orion Planner?", HYBRID)
        ```
    """

    def __init__(
        self,
        graph_store: KnowledgeStore,
        embedder: SentenceTransformersTextEmbedder,
        settings: RetrievalSettings | None = None,
        concurrency_limit: int = 4,
        llm: OpenAIChatClient | None = None,
    ) -> None:
        """Search ``graph_store`` (the knowledge store), embedding queries with ``embedder``.

        Args:
            graph_store: The open stores of a data dir.
            embedder: The embedding model the data dir was built with.
            settings: ``RETRIEVAL_*`` settings; read from the environment when None.
            concurrency_limit: Methods of one recipe that may run at the same time.
            llm: The endpoint of the ``text2cypher`` method; without it, that method fails with a typed error.
        """
        self.store = graph_store
        self.embedder = embedder
        self.settings = settings or load_retrieval_settings()
        self.concurrency_limit = concurrency_limit
        self.llm = llm
        self._pipelines: dict[RecipeConfig, Pipeline] = {}

    def pipeline_for(self, recipe: RecipeConfig) -> Pipeline:
        """The (cached) Haystack pipeline of a recipe."""
        if recipe not in self._pipelines:
            pipeline = build_search_pipeline(recipe, self.store, self.embedder, self.settings, self.llm)
            pipeline.warm_up()  # load models now, so a trace times the search and not the model load
            self._pipelines[recipe] = pipeline
        return self._pipelines[recipe]

    async def search(
        self, query: str, recipe: RecipeConfig, filters: SearchFilters | None = None
    ) -> list[SearchResult]:
        """Run ``recipe`` for ``query`` and return up to ``recipe.limit`` results, best first."""
        return (await self.search_with_trace(query, recipe, filters)).results

    def search_sync(self, query: str, recipe: RecipeConfig, filters: SearchFilters | None = None) -> SearchResponse:
        """``search_with_trace`` for callers without an event loop."""
        return asyncio.run(self.search_with_trace(query, recipe, filters))

    async def search_with_trace(
        self, query: str, recipe: RecipeConfig, filters: SearchFilters | None = None
    ) -> SearchResponse:
        """Run ``recipe`` for ``query`` within ``filters``; return the results and the trace.

        Raises:
            RetrievalError: an empty query, or a filter property no collection stores.
            AllRetrievalMethodsFailedError: every method of the recipe failed (the trace names why).
        """
        if not query.strip():
            raise RetrievalError("The query is empty. Give a question or some keywords to search for.")
        if filters is not None:
            check_properties(filters)
        pipeline = self.pipeline_for(recipe)
        started = time.perf_counter()
        method_names = [m.value for m in recipe.methods]
        try:
            outputs = await pipeline.run_async(
                pipeline_inputs(recipe, query, filters),
                include_outputs_from={*method_names, FUSION, *STEPS},
                concurrency_limit=self.concurrency_limit,
            )
        except PipelineRuntimeError as exc:
            raise RetrievalError(f"Search step {exc.component_name!r} failed: {exc}") from exc
        results: list[SearchResult] = outputs[CUT]["results"]
        trace = SearchTrace(
            query=query,
            recipe=recipe.name,
            methods=tuple(self._status(outputs, name) for name in method_names),
            fused=len(outputs[FUSION]["results"]),
            returned=len(results),
            elapsed_ms=(time.perf_counter() - started) * 1000,
            steps=tuple(self._status(outputs, name) for name in STEPS if name in outputs),
        )
        if len(trace.failures) == len(trace.methods):
            raise AllRetrievalMethodsFailedError(trace.failures)
        return SearchResponse(results=results, trace=trace)

    @staticmethod
    def _status(outputs: dict[str, dict[str, object]], name: str) -> MethodStatus:
        status = outputs.get(name, {}).get("status")
        if not isinstance(status, MethodStatus):
            return MethodStatus(name, ok=False, count=0, elapsed_ms=0.0, error="the method did not run")
        return status
