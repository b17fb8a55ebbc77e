"""`agrag recipe show NAME --pipeline` writes the compiled recipe as Haystack YAML that loads back and finds the same.

Each shipped recipe is dumped by the CLI, loaded with ``haystack.Pipeline.loads`` (no agrag code builds it), run
with the recipe's inputs and compared with ``SearchEngine`` on the same data dir: same ids, scores and methods.
"""

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from haystack import Pipeline
from typer.testing import CliRunner

from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.store_spec_errors import StoreNotOpenError, StoreSpecMismatchError
from agrag.components.stores.store_registry import open_store, registered_stores
from agrag.components.stores.store_spec import StoreSpec
from agrag.pipelines.config_models import RecipeConfig
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.pipelines.search_pipeline import CUT, pipeline_inputs
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings
from agrag.service.cli import app
from tests.service.conftest import copy_corpus
from tests.service.test_cli import run_agrag
from tests.support.scripted_llm import ScriptedLLM, scripted_llm

QUERIES = ("Who wrote the Orion Planner?", "Which robot carries a Lidar?", "What are the main themes?")
OFFLINE = (
    "entity",
    "chunk",
    "hybrid",
    "hybrid_reranked",
    "graph_expand",
    "thematic",
    "multi_hop",
    "bridge",
    "fact",
)
CYPHER = "MATCH (e:Entity) WHERE e.merged_into = '' RETURN e.name AS name ORDER BY name LIMIT 3"


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.tiny_cross_encoder import make_tiny_cross_encoder

    return make_tiny_cross_encoder(tmp_path_factory.mktemp("cross-encoder"))


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm(lambda messages: json.dumps({"cypher": CYPHER})) as server:
        yield server


@pytest.fixture
def env(
    tmp_path: Path, ingested_corpus: Path, tiny_cross_encoder: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """The variables of a user's shell: a private copy of the corpus, the cross-encoder and the LLM endpoint."""
    values = {
        "AGRAG_DATA_DIR": str(copy_corpus(ingested_corpus, tmp_path)),
        "RETRIEVAL_CROSS_ENCODER_MODEL": str(tiny_cross_encoder),
        "AGRAG_LLM_BASE_URL": llm.base_url,
        "AGRAG_LLM_MODEL": "scripted",
        "AGRAG_LLM_API_KEY": "sk-not-in-the-yaml",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


def settings_from(env: dict[str, str]) -> Settings:
    return Settings(
        AgragSettings(
            data_dir=Path(env["AGRAG_DATA_DIR"]),
            llm_base_url=env["AGRAG_LLM_BASE_URL"],
            llm_model=env["AGRAG_LLM_MODEL"],
            _env_file=None,  # type: ignore[call-arg]
        ),
        RetrievalSettings(cross_encoder_model=Path(env["RETRIEVAL_CROSS_ENCODER_MODEL"]), _env_file=None),  # type: ignore[call-arg]
    )


def shown(name: str) -> str:
    """The YAML of ``agrag recipe show NAME --pipeline``, run in-process (stdout only)."""
    out = CliRunner().invoke(app, ["recipe", "show", name, "--pipeline"])
    assert out.exit_code == 0, out.output
    return out.stdout


def ranked(results: list[SearchResult]) -> list[tuple[str, float, str, tuple[str, ...]]]:
    return [(r.item.id, r.score, r.method, r.methods) for r in results]


def loads(text: str) -> Pipeline:
    """``Pipeline.loads`` trusting agrag's modules, as the YAML's first lines tell a user to."""
    return Pipeline.loads(text, allowed_modules=["agrag"])


def run_loaded(pipeline: Pipeline, recipe: RecipeConfig, query: str, filters: SearchFilters | None = None) -> list:
    outputs = asyncio.run(pipeline.run_async(pipeline_inputs(recipe, query, filters), concurrency_limit=4))
    return ranked(outputs[CUT]["results"])


@pytest.fixture
def runtime(env: dict[str, str], embedder: SentenceTransformersTextEmbedder) -> Iterator[Runtime]:
    with open_runtime([], settings_from(env), embedder=embedder) as opened:
        yield opened


@pytest.mark.slow
def test_the_cli_writes_clean_yaml_for_a_pipe_that_loads_back(env: dict[str, str], tmp_path: Path) -> None:
    shell = {**os.environ, **env, "PREFECT_HOME": str(tmp_path / "prefect")}
    out = run_agrag("recipe", "show", "hybrid", "--pipeline", env=shell, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout and not out.stdout.startswith(("Error", "["))
    assert out.stdout.startswith("# The recipe hybrid as a Haystack pipeline")
    loaded = Pipeline.loads(out.stdout, allowed_modules=["agrag"])
    assert set(loaded.graph.nodes) == {"query_embedder", "entity", "chunk", "fusion", "final_fusion", "cut"}
    spec = yaml.safe_load(out.stdout)["components"]["chunk"]["init_parameters"]["store"]["init_parameters"]
    assert spec["data_dir"] == str(Path(env["AGRAG_DATA_DIR"]).resolve())
    assert spec["opener"] == "agrag.pipelines.store_factory.open_store_spec"


@pytest.mark.parametrize("name", OFFLINE)
def test_a_loaded_recipe_pipeline_finds_what_the_engine_finds(name: str, runtime: Runtime) -> None:
    recipe = load_recipe(name)
    loaded = loads(shown(name))  # its components resolve to the stores this process holds
    for query in QUERIES:
        expected = ranked(runtime.engine.search_sync(query, recipe).results)
        assert expected, (name, query)
        assert run_loaded(loaded, recipe, query) == expected, (name, query)


def test_the_loaded_pipeline_keeps_to_filters_like_the_engine(runtime: Runtime) -> None:
    recipe = load_recipe("hybrid")
    filters = SearchFilters(labels=("Person",))
    expected = ranked(runtime.engine.search_sync(QUERIES[0], recipe, filters).results)
    loaded = loads(shown("hybrid"))
    assert run_loaded(loaded, recipe, QUERIES[0], filters) == expected
    # the README's way: Pipeline.run, one method after the other
    assert ranked(loaded.run(pipeline_inputs(recipe, QUERIES[0], filters))[CUT]["results"]) == expected


def test_text2cypher_yaml_names_the_key_variable_and_runs_with_the_endpoint(runtime: Runtime) -> None:
    text = shown("text2cypher")
    assert "sk-not-in-the-yaml" not in text
    llm = yaml.safe_load(text)["components"]["text2cypher"]["init_parameters"]["llm"]["init_parameters"]
    assert llm["api_key"] == {"type": "env_var", "env_vars": ["AGRAG_LLM_API_KEY"], "strict": False}
    recipe = load_recipe("text2cypher")
    expected = ranked(runtime.engine.search_sync("Name three entities", recipe).results)
    assert len(expected) == 3
    assert run_loaded(loads(text), recipe, "Name three entities") == expected


def test_a_process_that_holds_nothing_opens_the_data_dir_from_the_yaml(
    env: dict[str, str], embedder: SentenceTransformersTextEmbedder
) -> None:
    recipe = load_recipe("hybrid")
    with open_runtime([], settings_from(env), embedder=embedder) as runtime:
        expected = ranked(runtime.engine.search_sync(QUERIES[1], recipe).results)
    loaded = loads(shown("hybrid"))
    try:
        assert run_loaded(loaded, recipe, QUERIES[1]) == expected  # warm_up opened the data dir here
    finally:
        data_dir = str(Path(env["AGRAG_DATA_DIR"]).resolve())
        for store in registered_stores():
            if store.spec is not None and store.spec.data_dir == data_dir:
                store.close()  # release the data dir
    assert all(s.spec is None or s.spec.data_dir != data_dir for s in registered_stores())


def test_a_spec_that_disagrees_with_the_open_store_is_refused(runtime: Runtime) -> None:
    assert runtime.store.spec is not None
    other = StoreSpec(runtime.store.spec.data_dir, runtime.store.spec.embedding_model, rrf_k=7)
    with pytest.raises(StoreSpecMismatchError, match=r"rrf_k=60.*rrf_k=7"):
        open_store(other)
    assert open_store(runtime.store.spec) is runtime.store


def test_a_spec_without_an_opener_needs_an_open_store(tmp_path: Path) -> None:
    with pytest.raises(StoreNotOpenError, match="open_store_spec"):
        open_store(StoreSpec(str(tmp_path / "never"), "all-MiniLM-L6-v2", rrf_k=60))


def test_an_unknown_recipe_is_a_clear_error_on_stderr() -> None:
    out = CliRunner().invoke(app, ["recipe", "show", "nope", "--pipeline"])
    assert out.exit_code == 2
    assert out.stdout == ""
    assert "no recipe named 'nope'" in out.stderr and "hybrid" in out.stderr


def test_recipe_show_without_pipeline_prints_the_validated_recipe() -> None:
    out = CliRunner().invoke(app, ["recipe", "show", "graph_expand", "recipe.limit=4"])
    assert out.exit_code == 0, out.output
    shown_recipe = yaml.safe_load(out.stdout)
    assert shown_recipe["name"] == "graph_expand" and shown_recipe["limit"] == 4 and shown_recipe["bfs"] is True
