"""Runs an evaluation: baselines and recipes over one dataset, each question's ranked passage list kept."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agrag.components.data_models.chunk import Chunk, document_id_of
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.search_result import SearchResult
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.embedders.sqlite_embedding_cache import SqliteEmbeddingCache
from agrag.components.errors import EvaluationError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows.ingest_report import IngestReport
from agrag.pipelines.config_models import AgragConfig, RecipeConfig
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import AgragSettings, EvalSettings, load_retrieval_settings
from agrag.pipelines.store_factory import open_knowledge_store
from agrag.service.evaluation.baselines import Bm25Baseline, DenseBaseline, rrf
from agrag.service.evaluation.dataset import EvalDataset
from agrag.service.evaluation.workspace import BuiltStore, build_store, document_index

BASELINE = "baseline"
RECIPE = "recipe"
LLM_TRIPLES = "LLM triples"
# Passed to every ingest of an evaluation: one embedded store per run, whatever the user's default backend.
EVAL_STORE_OVERRIDES = ("vector_store=edge",)

Tick = Callable[[str, int], None]  # (what is running, questions done in it)


@dataclass(frozen=True, slots=True)
class SystemRun:
    """One system's ranked passage lists, one per question.

    Attributes:
        name: Column name in the report (``bm25``, ``hybrid``, ``hybrid (LLM triples)``).
        kind: ``baseline`` or ``recipe``.
        strict: Passage indexes from passage hits only (the headline).
        expanded: Entities and relations replaced by the passages that support them (a diagnostic).
    """

    name: str
    kind: str
    strict: list[list[int]]
    expanded: list[list[int]]


@dataclass(frozen=True, slots=True)
class EvalRun:
    """Everything one ``agrag eval`` produced before scoring."""

    dataset: EvalDataset
    config: AgragConfig
    systems: list[SystemRun]
    seconds: dict[str, float] = field(default_factory=dict)
    ingests: dict[str, IngestReport | None] = field(default_factory=dict)


def _passages(
    results: Sequence[SearchResult], index: dict[str, int], support: dict[str, list[str]]
) -> tuple[list[int], list[int]]:
    """Walk results best first; the first hit of a passage wins. Returns (strict, expanded)."""
    strict: list[int] = []
    expanded: list[int] = []
    for result in results:
        item = result.item
        if isinstance(item, Chunk):
            chunk_ids = [item.id]
        elif isinstance(item, Entity):
            chunk_ids = support.get(item.id, [])
        elif isinstance(item, Relation):
            chunk_ids = list(item.chunk_ids)
        else:
            chunk_ids = []
        for chunk_id in chunk_ids:
            passage = index.get(document_id_of(chunk_id))
            if passage is None:
                continue
            if isinstance(item, Chunk) and passage not in strict:
                strict.append(passage)
            if passage not in expanded:
                expanded.append(passage)
    return strict, expanded


class _RecipeRunner:
    def __init__(
        self, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder, index: dict[str, int], depth: int
    ) -> None:
        self.store = store
        self.engine = SearchEngine(store, embedder, load_retrieval_settings())
        self.index = index
        self.depth = depth

    async def rank(self, recipe: RecipeConfig, questions: Sequence[str], tick: Tick, label: str) -> SystemRun:
        strict, expanded = [], []
        for done, question in enumerate(questions, start=1):
            results = (await self.engine.search_with_trace(question, recipe)).results
            entity_ids = [r.item.id for r in results if isinstance(r.item, Entity)]
            support = self.store.graph.supporting_chunk_ids(entity_ids) if entity_ids else {}
            ranked = _passages(results, self.index, support)
            strict.append(ranked[0][: self.depth])
            expanded.append(ranked[1][: self.depth])
            tick(label, done)
        return SystemRun(label, RECIPE, strict, expanded)


def run_baselines(dataset: EvalDataset, embedder: SentenceTransformersTextEmbedder, depth: int) -> list[SystemRun]:
    """BM25, dense and their RRF over the dataset's passages."""
    queries = [q.question for q in dataset.questions]
    bm25 = Bm25Baseline(dataset.corpus).rank(queries, max(depth, 100))
    dense = DenseBaseline(dataset.corpus, embedder).rank(queries, max(depth, 100))
    fused = [rrf([a, b]) for a, b in zip(bm25, dense, strict=True)]
    return [
        SystemRun(name, BASELINE, [r[:depth] for r in lists], [r[:depth] for r in lists])
        for name, lists in (("bm25", bm25), ("dense", dense), ("rrf", fused))
    ]


@dataclass(frozen=True, slots=True)
class EvalInputs:
    """What ``run_evaluation`` needs besides the dataset."""

    config: AgragConfig
    overrides: tuple[str, ...]
    settings: AgragSettings
    eval_settings: EvalSettings
    recipes: tuple[RecipeConfig, ...]
    progress: bool = False


def run_evaluation(dataset: EvalDataset, inputs: EvalInputs, tick: Tick) -> EvalRun:
    """Build (or reuse) the stores, run the baselines and every recipe, and keep each question's passage list."""
    config = inputs.config
    depth = max(config.evaluation.ks)
    # Deep enough that the strict passage list reaches the largest k even when entities take places.
    limit = config.evaluation.result_limit
    recipes = [r.model_copy(update={"limit": max(r.limit, limit)}) for r in inputs.recipes]
    cache_dir = inputs.eval_settings.cache_dir
    embedder = SentenceTransformersTextEmbedder(
        config.embedder.model,
        config.embedder.device,
        config.embedder.batch_size,
        progress_bar=inputs.progress,
        cache=SqliteEmbeddingCache(cache_dir / "embeddings", config.embedder.model),
    )
    seconds: dict[str, float] = {}
    ingests: dict[str, IngestReport | None] = {}
    started = time.perf_counter()
    systems = run_baselines(dataset, embedder, depth)
    seconds["baselines"] = time.perf_counter() - started
    variants: list[tuple[str, tuple[str, ...]]] = [("", ())]
    if config.evaluation.llm_triples:
        if dataset.triples_path is None:
            raise EvaluationError(
                f"{dataset.name} has no precomputed triples file: give one with --triples FILE, "
                "or set evaluation.llm_triples=false."
            )
        variants.append((LLM_TRIPLES, ("ingest/extractor=triples", f"ingest.extractor.path={dataset.triples_path}")))
    searcher = _Searcher(inputs, embedder, recipes, [q.question for q in dataset.questions], document_index(dataset))
    for variant, extra in variants:
        started = time.perf_counter()
        label = "triples" if variant else "default"
        overrides = [*EVAL_STORE_OVERRIDES, *inputs.overrides, *extra]
        built = build_store(dataset, overrides, label, cache_dir, inputs.progress)
        seconds[f"ingest {label}"] = time.perf_counter() - started
        ingests[label] = built.report
        started = time.perf_counter()
        systems.extend(searcher.run(built, variant, tick))
        seconds[f"search {label}"] = time.perf_counter() - started
    return EvalRun(dataset, config, systems, seconds, ingests)


@dataclass(frozen=True, slots=True)
class _Searcher:
    inputs: EvalInputs
    embedder: SentenceTransformersTextEmbedder
    recipes: list[RecipeConfig]
    questions: list[str]
    index: dict[str, int]

    def run(self, built: BuiltStore, variant: str, tick: Tick) -> list[SystemRun]:
        settings = self.inputs.settings.model_copy(update={"data_dir": built.data_dir})

        async def every_recipe(store: KnowledgeStore) -> list[SystemRun]:
            runner = _RecipeRunner(store, self.embedder, self.index, max(self.inputs.config.evaluation.ks))
            runs = []
            for recipe in self.recipes:
                label = f"{recipe.name} ({variant})" if variant else recipe.name
                runs.append(await runner.rank(recipe, self.questions, tick, label))
            return runs

        config = self.inputs.config
        with open_knowledge_store(settings, config.vector_store, self.embedder, load_retrieval_settings()) as store:
            return asyncio.run(every_recipe(store))
