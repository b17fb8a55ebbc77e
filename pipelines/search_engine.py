"""``SearchEngine``: runs recipes over a knowledge store."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from haystack import Pipeline
from haystack.core.errors import PipelineRuntimeError

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.query_analysis import QueryAnalysis
from agrag.components.data_models.resolution import ResolutionCandidate
from agrag.components.data_models.retrieval_method import SearchStep
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.data_models.search_trace import SearchTrace
from agrag.components.data_models.traversal_direction import TraversalDirection
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AllRetrievalMethodsFailedError, FilterNotHonouredError, RetrievalError
from agrag.components.expanders.graph_bfs_expander import GraphBfsExpander
from agrag.components.graph.graph_entity_lookup import GraphEntityLookup
from agrag.components.graph.passage_graph_cache import PassageGraphCache
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.retrievers.filter_conditions import check_properties
from agrag.components.retrievers.filter_support import refusals
from agrag.components.retrievers.graph_candidate_retriever import GraphCandidateRetriever
from agrag.components.retrievers.rule_query_analyzer import RuleQueryAnalyzer
from agrag.components.safe_text import require_text
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.config_models import RecipeConfig
from agrag.pipelines.event_loop_thread import EventLoopThread
from agrag.pipelines.search_pipeline import (
    CUT,
    FUSION,
    STEPS,
    build_search_pipeline,
    pipeline_inputs,
    query_analyzer,
    recipe_parts,
    without_parts,
)
from agrag.pipelines.settings import RetrievalSettings, load_retrieval_settings

logger = logging.getLogger(__name__)

MAX_PIPELINES = 32  # built pipelines kept per engine (recipes from requests may each differ)


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
            llm: The endpoint of the ``text2cypher`` method and of the query analysis (``RETRIEVAL_QUERY_ANALYZER``);
                without it, text2cypher fails with a typed error and the rules analyse queries.
        """
        self.store = graph_store
        self.embedder = embedder
        self.settings = settings or load_retrieval_settings()
        self.concurrency_limit = concurrency_limit
        self.llm = llm
        self.analyzer = query_analyzer(self.settings, llm)
        self._pipelines: OrderedDict[RecipeConfig, Pipeline] = OrderedDict()
        self._pipelines_lock = threading.Lock()
        # sync callers (the CLI, the HTTP API's worker threads) share one loop and one pool for the methods
        self._loop = EventLoopThread("agrag-search", workers=max(8, 2 * concurrency_limit))
        self._snapshots = PassageGraphCache(graph_store.graph)  # one in-memory passage graph for every recipe
        self._lookup = GraphEntityLookup(graph_store.graph, graph_store.entities)

    def pipeline_for(self, recipe: RecipeConfig) -> Pipeline:
        """The (cached) Haystack pipeline of a recipe; one engine may serve many threads at once.

        The most recently used ``MAX_PIPELINES`` are kept, so clients sending inline recipes cannot grow it forever.
        """
        with self._pipelines_lock:
            if recipe in self._pipelines:
                self._pipelines.move_to_end(recipe)
                return self._pipelines[recipe]
            pipeline = build_search_pipeline(
                recipe, self.store, self.embedder, self.settings, self.llm, snapshots=self._snapshots
            )
            pipeline.warm_up()  # load models now, so a trace times the search and not the model load
            self._pipelines[recipe] = pipeline
            if len(self._pipelines) > MAX_PIPELINES:
                self._pipelines.popitem(last=False)
            return pipeline

    async def search(
        self, query: str, recipe: RecipeConfig, filters: SearchFilters | None = None
    ) -> list[SearchResult]:
        """Run ``recipe`` for ``query`` and return up to ``recipe.limit`` results, best first."""
        return (await self.search_with_trace(query, recipe, filters)).results

    def search_sync(self, query: str, recipe: RecipeConfig, filters: SearchFilters | None = None) -> SearchResponse:
        """``search_with_trace`` for callers without an event loop."""
        return self._loop.run(self.search_with_trace(query, recipe, filters))

    def close(self) -> None:
        """Stop the event loop ``search_sync`` runs on (a later call starts it again)."""
        self._loop.close()

    async def search_with_trace(
        self, query: str, recipe: RecipeConfig, filters: SearchFilters | None = None
    ) -> SearchResponse:
        """Run ``recipe`` for ``query`` within ``filters``; return the results and the trace.

        A method or step that ``filter_support`` says cannot keep to a filter given does not run: its trace entry
        fails with a ``FilterNotHonouredError`` naming it and the filter, and the other parts still return.

        Raises:
            RetrievalError: an empty query, or a filter property no collection stores.
            AllRetrievalMethodsFailedError: every method of the recipe failed (the trace names why).
        """
        if not require_text(query).strip():
            raise RetrievalError("The query is empty. Give a question or some keywords to search for.")
        if filters is not None:
            check_properties(filters)
        started = time.perf_counter()
        method_names = [m.value for m in recipe.methods]
        # A part that cannot keep to a filter does not run at all (never unfiltered); the trace says why.
        parts = recipe_parts(recipe)
        refused = {parts[part]: error for part, error in refusals(parts, filters).items()}
        if len(refused.keys() & set(method_names)) == len(method_names):
            raise AllRetrievalMethodsFailedError({name: _refusal(refused[name]) for name in method_names})
        runnable = without_parts(recipe, [p for p in parts if parts[p] in refused]) if refused else recipe
        pipeline = self.pipeline_for(runnable)
        # The analysis only goes on the trace for now, so it runs beside the methods (an LLM's takes a while).
        if isinstance(self.analyzer, RuleQueryAnalyzer):  # a tenth of a millisecond: not worth a thread hop
            analysing: asyncio.Future[QueryAnalysis] = asyncio.get_running_loop().create_future()
            analysing.set_result(self.analyzer.analyze(query))
        else:
            analysing = asyncio.ensure_future(asyncio.to_thread(self.analyzer.analyze, query))
        try:
            outputs = await pipeline.run_async(
                pipeline_inputs(runnable, query, filters),
                include_outputs_from={*method_names, FUSION, *STEPS},
                concurrency_limit=self.concurrency_limit,
            )
        except PipelineRuntimeError as exc:
            raise RetrievalError(f"Search step {exc.component_name!r} failed: {exc}") from exc
        finally:
            analysis = await analysing
        for name, error in refused.items():
            logger.info("Search part %s did not run: %s", name, error)
            outputs[name] = {"status": MethodStatus(name, ok=False, count=0, elapsed_ms=0.0, error=_refusal(error))}
        results: list[SearchResult] = outputs[CUT]["results"]
        trace = SearchTrace(
            query=query,
            recipe=recipe.name,
            methods=tuple(self._status(outputs, name) for name in method_names),
            fused=len(outputs[FUSION]["results"]),
            returned=len(results),
            elapsed_ms=(time.perf_counter() - started) * 1000,
            steps=tuple(self._status(outputs, name) for name in STEPS if name in outputs),
            analysis=analysis,
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

    async def find_entity(self, name: str, filters: SearchFilters | None = None) -> Entity | None:
        """Resolve a name to an entity: an exact (normalized) name first, else the top entity search hit.

        ``filters`` (labels, document ids, properties) apply to both ways; None when nothing matches.
        """
        # Within documents, only a name their text uses finds an entity, and the entity is named as they name it.
        exact = self._lookup.exact(name, filters)
        if exact is not None:
            return exact
        # By similarity alone: a misspelt "Orion Planer" means the Orion Planner, not the entity "Orion" it names.
        embedding = (await asyncio.to_thread(self.embedder.run, text=name))["embedding"]
        return await asyncio.to_thread(self._lookup.nearest, name, embedding, filters)

    async def traverse(
        self,
        seed: str,
        relation_type: str | None = None,
        direction: TraversalDirection | str = TraversalDirection.BOTH,
        depth: int = 1,
        limit: int = 20,
    ) -> list[SearchResult]:
        """The relations and entities around one entity (an id or a name), nearest first.

        Raises:
            RetrievalError: ``seed`` is no entity id and no name that resolves to one, or an unknown direction.
        """
        entity = await self._resolve_seed(seed)
        walker = GraphBfsExpander(self.store.graph, per_hop=self.settings.traversal_per_hop, method=SearchStep.TRAVERSE)
        types = [relation_type] if relation_type else None
        return walker.walk([entity.id], types, direction=direction, depth=depth, limit=limit)

    async def list_relationship_types(self, seed: str) -> dict[str, int]:
        """The relation types attached to one entity (an id or a name) at depth 1, with their counts."""
        entity = await self._resolve_seed(seed)
        return self.store.graph.relation_types_of(entity.id)

    def search_candidates(self, query: str, limit: int = 10) -> list[ResolutionCandidate]:
        """Near misses of entity resolution whose names match ``query``, best first.

        They have no document scope: a caller limited to some documents must not expose this call.
        """
        return GraphCandidateRetriever(self.store.graph, limit=limit).run(query=query)["candidates"]

    async def _resolve_seed(self, seed: str) -> Entity:
        known = self._lookup.resolve(seed, limit=1)
        if known:
            return known[0]
        # a seed must name one entity exactly; a near name is only offered, never walked from
        nearest = await self.find_entity(seed)
        hint = f" Did you mean {nearest.name!r} (id {nearest.id})?" if nearest is not None else ""
        raise RetrievalError(f"No entity is called or has the id {seed!r}.{hint}")


def _refusal(error: FilterNotHonouredError) -> str:
    return f"{type(error).__name__}: {error}"
