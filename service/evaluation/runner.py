"""Runs an evaluation: baselines and recipes over one dataset, each question's ranked passage list kept."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.embedders.sqlite_embedding_cache import SqliteEmbeddingCache
from agrag.components.errors import AllRetrievalMethodsFailedError, ConfigError, EvaluationError
from agrag.flows.ingest_report import IngestReport
from agrag.pipelines.config_models import AgragConfig, RecipeConfig, Reranker, RetrievalMethod
from agrag.pipelines.embedder_factory import embedder_for
from agrag.pipelines.runtime import open_runtime
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import AgragSettings, EvalSettings, RetrievalSettings, Settings
from agrag.service.evaluation.answer_runner import AnswerRecord, run_answers
from agrag.service.evaluation.baselines import Bm25Baseline, DenseBaseline, rrf
from agrag.service.evaluation.dataset import EvalDataset
from agrag.service.evaluation.passages import entities_to_support, ranked_passages
from agrag.service.evaluation.search_modes import rank_search_modes
from agrag.service.evaluation.workspace import BuiltStore, build_store, document_index

BASELINE = "baseline"
RECIPE = "recipe"
LLM_TRIPLES = "LLM triples"
# Passed before the user's overrides to every ingest of an evaluation: one embedded store per run, whatever the
# user's default backend; and offline community reports, so an LLM configured for evaluation.answers or text2cypher
# does not change (or pay for) the stores, whose cache key knows the config but not the environment.
EVAL_STORE_OVERRIDES = ("vector_store=edge", "ingest.communities.reports=extractive")
RRF_BASELINE = "rrf"  # the fused baseline (RRF of BM25 and dense)

Tick = Callable[[str, int], None]  # (what is running, questions done in it)


@dataclass(frozen=True, slots=True)
class SystemRun:
    """One system's ranked passage lists, one per question, or why the system did not run.

    Attributes:
        name: Column name in the report (``bm25``, ``hybrid``, ``hybrid (LLM triples)``, ``search_evidence (graph)``).
        kind: ``baseline``, ``recipe`` or ``search_evidence`` (a mode of the agent's search tool).
        strict: Passage indexes from passage hits only (the headline).
        expanded: Entities, relations and community reports replaced by their passages (a diagnostic; see
            ``passages``).
        skipped: Why the recipe could not run here (a setting it needs is missing); then both lists are empty.
        failed: Questions whose search had a failed method (a question where every method failed scores an empty
            list).
        failure: The first such failure, for the report.
    """

    name: str
    kind: str
    strict: list[list[int]]
    expanded: list[list[int]]
    skipped: str | None = None
    failed: int = 0
    failure: str = ""


@dataclass(frozen=True, slots=True)
class EvalRun:
    """Everything one ``agrag eval`` produced before scoring."""

    dataset: EvalDataset
    config: AgragConfig
    systems: list[SystemRun]
    seconds: dict[str, float] = field(default_factory=dict)
    ingests: dict[str, IngestReport | None] = field(default_factory=dict)
    answers: list[AnswerRecord] | None = None  # the agent's answers, when ``evaluation.answers`` is true


def skip_reason(recipe: RecipeConfig, retrieval: RetrievalSettings, settings: AgragSettings) -> str | None:
    """Why ``recipe`` cannot run with these settings (None: it can), said so the reader knows what to set."""
    if recipe.reranker is Reranker.CROSS_ENCODER and retrieval.cross_encoder_model is None:
        return "needs a cross-encoder: RETRIEVAL_CROSS_ENCODER_MODEL (a cross-encoder folder) is not set"
    if RetrievalMethod.TEXT2CYPHER in recipe.methods and not settings.llm_base_url:
        return "needs an LLM to write Cypher: AGRAG_LLM_BASE_URL is not set"
    return None


class RecipeRunner:
    """Runs recipes over the questions with one search engine and keeps each question's passage lists.

    Usage:
        ```python
        runner = RecipeRunner(SearchEngine(store, embedder), document_index(dataset, cache_dir), depth=10)
        run = await runner.rank(load_recipe("hybrid"), questions, tick, "hybrid")
        ```
    """

    def __init__(self, engine: SearchEngine, index: dict[str, int], depth: int) -> None:
        """Search with ``engine``; ``index`` maps document ids to corpus indexes; lists keep ``depth`` passages."""
        self.engine = engine
        self.index = index
        self.depth = depth

    async def rank(self, recipe: RecipeConfig, questions: Sequence[str], tick: Tick, label: str) -> SystemRun:
        """One run of ``recipe`` labelled ``label``; skipped (with the reason) when its pipeline cannot be built.

        A question whose every method fails scores an empty list; the run counts the questions with a failed method.
        """
        try:
            self.engine.pipeline_for(recipe)  # builds and warms up once: a model that does not load skips the recipe
        except ConfigError as exc:
            return SystemRun(label, RECIPE, [], [], skipped=str(exc))
        strict, expanded = [], []
        failed, failure = 0, ""
        for done, question in enumerate(questions, start=1):
            try:
                response = await self.engine.search_with_trace(question, recipe)
            except AllRetrievalMethodsFailedError as exc:  # scored as an empty list, counted in the report
                results, reasons = [], exc.failures
            else:
                results, reasons = response.results, response.trace.failures
            if reasons:
                failed += 1
                failure = failure or "; ".join(f"{m}: {r}" for m, r in sorted(reasons.items()))
            entity_ids = entities_to_support(results)
            support = self.engine.store.graph.supporting_chunk_ids(entity_ids) if entity_ids else {}
            ranked = ranked_passages(results, self.index, support)
            strict.append(ranked[0][: self.depth])
            expanded.append(ranked[1][: self.depth])
            tick(label, done)
        return SystemRun(label, RECIPE, strict, expanded, failed=failed, failure=failure)


def run_baselines(dataset: EvalDataset, embedder: SentenceTransformersTextEmbedder, depth: int) -> list[SystemRun]:
    """BM25, dense and their RRF over the dataset's passages."""
    queries = [q.question for q in dataset.questions]
    bm25 = Bm25Baseline(dataset.corpus).rank(queries, max(depth, 100))
    dense = DenseBaseline(dataset.corpus, embedder).rank(queries, max(depth, 100))
    fused = [rrf([a, b]) for a, b in zip(bm25, dense, strict=True)]
    return [
        SystemRun(name, BASELINE, [r[:depth] for r in lists], [r[:depth] for r in lists])
        for name, lists in (("bm25", bm25), ("dense", dense), (RRF_BASELINE, fused))
    ]


@dataclass(frozen=True, slots=True)
class EvalInputs:
    """What ``run_evaluation`` needs besides the dataset."""

    config: AgragConfig
    overrides: tuple[str, ...]
    settings: Settings
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
    embedder = embedder_for(
        config.embedder,
        inputs.settings.agrag,
        progress_bar=inputs.progress,
        cache=SqliteEmbeddingCache(
            cache_dir / "embeddings", config.embedder.model, config.embedder.backend.vector_variant
        ),
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
    questions = [q.question for q in dataset.questions]
    index = document_index(dataset, cache_dir, inputs.settings.agrag.files_root)
    searcher = _Searcher(inputs, embedder, recipes, questions, index)
    answers: list[AnswerRecord] | None = None
    for variant, extra in variants:
        started = time.perf_counter()
        label = "triples" if variant else "default"
        overrides = [*EVAL_STORE_OVERRIDES, *inputs.overrides, *extra]
        built = build_store(dataset, overrides, label, cache_dir, inputs.progress)
        seconds[f"ingest {label}"] = time.perf_counter() - started
        ingests[label] = built.report
        started = time.perf_counter()
        ranked, answered = searcher.run(built, overrides, variant, tick)
        systems.extend(ranked)
        seconds[f"search {label}"] = time.perf_counter() - started
        if answered is not None:
            answers = answered
            seconds["answers"] = sum(record.seconds for record in answered)
    return EvalRun(dataset, config, systems, seconds, ingests, answers)


@dataclass(frozen=True, slots=True)
class _Searcher:
    inputs: EvalInputs
    embedder: SentenceTransformersTextEmbedder
    recipes: list[RecipeConfig]
    questions: list[str]
    index: dict[str, int]

    def run(
        self, built: BuiltStore, overrides: Sequence[str], variant: str, tick: Tick
    ) -> tuple[list[SystemRun], list[AnswerRecord] | None]:
        """Every recipe and search mode on one store, then (default store only, when asked) the agent's answers."""
        settings = self.inputs.settings.with_data_dir(built.data_dir)
        evaluation = self.inputs.config.evaluation
        retrieval = settings.retrieval

        async def every_recipe(engine: SearchEngine) -> list[SystemRun]:
            runner = RecipeRunner(engine, self.index, max(self.inputs.config.evaluation.ks))
            runs = []
            for recipe in self.recipes:
                label = f"{recipe.name} ({variant})" if variant else recipe.name
                reason = skip_reason(recipe, retrieval, settings.agrag)
                if reason is None:
                    runs.append(await runner.rank(recipe, self.questions, tick, label))
                else:
                    runs.append(SystemRun(label, RECIPE, [], [], skipped=reason))
            return runs

        with open_runtime(overrides, settings, embedder=self.embedder) as runtime:
            runs = asyncio.run(every_recipe(runtime.engine))
            depth, limit = max(evaluation.ks), evaluation.result_limit
            modes = evaluation.search_modes
            runs += rank_search_modes(
                runtime, modes, self.questions, index=self.index, depth=depth, limit=limit, tick=tick, variant=variant
            )
            answers = None
            if evaluation.answers and not variant:
                answers = run_answers(runtime, self.questions, self.index, tick)
            return runs, answers
