import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.recipes import PRESETS, load_recipe
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import AgragSettings, RetrievalSettings
from agrag.pipelines.store_factory import open_knowledge_store
from agrag.service.evaluation.command import recipe_names
from agrag.service.evaluation.runner import RECIPE, RecipeRunner, skip_reason
from tests.support.scripted_llm import scripted_llm

QUESTIONS = ["How many robots are there?", "Who wrote the Orion Planner?"]


def no_tick(label: str, done: int) -> None:
    pass


@pytest.fixture
def empty_store(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[KnowledgeStore]:
    store = open_knowledge_store(AgragSettings(data_dir=tmp_path / "data"), load_config().vector_store, embedder)
    yield store
    store.close()


def test_every_preset_runs_here_but_the_two_that_need_a_setting() -> None:
    bare_retrieval, bare = RetrievalSettings(cross_encoder_model=None), AgragSettings(llm_base_url=None)
    reasons = {name.lower(): skip_reason(load_recipe(name.lower()), bare_retrieval, bare) for name in PRESETS}
    assert {name for name, reason in reasons.items() if reason is None} == {
        "entity",
        "chunk",
        "hybrid",
        "graph_expand",
        "thematic",
        "multi_hop",
        "bridge",
        "fact",
    }
    assert "RETRIEVAL_CROSS_ENCODER_MODEL" in str(reasons["hybrid_reranked"])
    assert "AGRAG_LLM_BASE_URL" in str(reasons["text2cypher"])
    equipped_retrieval = RetrievalSettings(cross_encoder_model=Path("/models/cross-encoder"))
    equipped = AgragSettings(llm_base_url="http://localhost:11434/v1")
    assert skip_reason(load_recipe("hybrid_reranked"), equipped_retrieval, bare) is None
    assert skip_reason(load_recipe("text2cypher"), bare_retrieval, equipped) is None


def test_all_names_every_recipe_presets_first_then_the_users_own(tmp_path: Path) -> None:
    mine = tmp_path / "conf-mine"
    (mine / "recipe").mkdir(parents=True)
    (mine / "recipe" / "aaa_mine.yaml").write_text("methods: [chunk]\n")
    presets = [p.lower() for p in PRESETS]
    assert recipe_names(["all"], mine) == [*presets, "aaa_mine"]
    assert recipe_names(["multi_hop", "all"], mine) == [
        "multi_hop",
        *(p for p in presets if p != "multi_hop"),
        "aaa_mine",
    ]
    assert recipe_names(["hybrid", "chunk"], mine) == ["hybrid", "chunk"]


async def test_a_recipe_whose_model_does_not_load_is_a_skipped_run(
    empty_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder, tmp_path: Path
) -> None:
    settings = RetrievalSettings(cross_encoder_model=tmp_path / "no-such-model")
    runner = RecipeRunner(SearchEngine(empty_store, embedder, settings), {}, depth=10)
    run = await runner.rank(load_recipe("hybrid_reranked"), QUESTIONS, no_tick, "hybrid_reranked")
    assert (run.kind, run.strict, run.expanded) == (RECIPE, [], [])
    assert run.skipped is not None and "no-such-model" in run.skipped


async def test_failed_searches_score_empty_lists_and_are_counted(
    empty_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    with scripted_llm(lambda messages: json.dumps({"cypher": "THIS IS NOT CYPHER"})) as server:
        llm = OpenAIChatClient(server.base_url, "scripted", max_retries=0)
        runner = RecipeRunner(SearchEngine(empty_store, embedder, RetrievalSettings(), llm=llm), {}, depth=10)
        failing = await runner.rank(load_recipe("text2cypher"), QUESTIONS, no_tick, "text2cypher")
        fine = await runner.rank(load_recipe("hybrid"), QUESTIONS, no_tick, "hybrid")
    assert failing.skipped is None
    assert (failing.strict, failing.expanded, failing.failed) == ([[], []], [[], []], 2)
    assert failing.failure.startswith("text2cypher: ")
    assert (fine.strict, fine.failed, fine.failure) == ([[], []], 0, "")
