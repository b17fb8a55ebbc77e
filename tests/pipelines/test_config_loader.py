from pathlib import Path

import pytest
from pydantic import ValidationError

from agrag.components.errors import ConfigError, UnknownConfigChoiceError, UnknownRecipeMethodError
from agrag.pipelines.config_loader import compose_raw, load_config, packaged_conf_dir
from agrag.pipelines.config_models import (
    EdgeVectorStoreConfig,
    LexicalExtractorConfig,
    QdrantVectorStoreConfig,
    RetrievalMethod,
    TriplesExtractorConfig,
)
from agrag.pipelines.recipe_config import RecipeConfig
from agrag.pipelines.recipes import load_recipe


def user_recipe(tmp_path: Path, name: str, body: str) -> Path:
    conf = tmp_path / "myconf"
    (conf / "recipe").mkdir(parents=True, exist_ok=True)
    (conf / "recipe" / f"{name}.yaml").write_text(body, encoding="utf-8")
    return conf


def test_default_composition_is_the_bridge_recipe_on_the_embedded_store() -> None:
    config = load_config()
    assert config.recipe.name == "bridge"
    assert config.recipe.methods == (RetrievalMethod.PPR,)
    assert config.recipe.bridge
    assert config.recipe.limit == 10
    assert isinstance(config.vector_store, EdgeVectorStoreConfig)
    assert config.embedder.model == "all-MiniLM-L6-v2"


def test_overrides_change_values_and_pick_group_options() -> None:
    config = load_config(["recipe.limit=3", "vector_store=qdrant", "ingest.chunker.max_chars=800"])
    assert config.recipe.limit == 3
    assert isinstance(config.vector_store, QdrantVectorStoreConfig)
    assert config.ingest.chunker.max_chars == 800


def test_an_unknown_recipe_names_the_valid_choices() -> None:
    valid = [
        "bridge",
        "chunk",
        "entity",
        "fact",
        "graph_expand",
        "hybrid",
        "hybrid_reranked",
        "multi_hop",
        "text2cypher",
        "thematic",
    ]
    with pytest.raises(UnknownConfigChoiceError, match=f"Valid choices: {', '.join(valid)}") as info:
        load_config(["recipe=nonexistent"])
    assert info.value.valid == valid


def test_the_extractor_is_a_nested_group_and_triples_need_a_path() -> None:
    assert isinstance(load_config().ingest.extractor, LexicalExtractorConfig)
    chosen = load_config(["ingest/extractor=triples", "ingest.extractor.path=/data/openie.json"]).ingest.extractor
    assert chosen == TriplesExtractorConfig(path="/data/openie.json")
    with pytest.raises(ConfigError, match=r"ingest\.extractor\.path"):
        load_config(["ingest/extractor=triples"])
    with pytest.raises(UnknownConfigChoiceError, match="Valid choices: lexical, llm, triples"):
        load_config(["ingest/extractor=openie"])


def test_chunker_ontology_and_resolution_groups_are_validated() -> None:
    assert load_config(["ingest/chunker=sentence"]).ingest.chunker.kind == "sentence"
    with pytest.raises(ConfigError, match="overlap"):
        load_config(["ingest/chunker=fixed", "ingest.chunker.overlap=2000"])
    with pytest.raises(UnknownConfigChoiceError, match="Valid choices: fixed, sentence, structural"):
        load_config(["ingest/chunker=paragraph"])
    ontology = load_config(["ingest/ontology=engineering"]).ingest.ontology
    assert ("Person", "Component") in ontology.relation_types["WROTE"]
    with pytest.raises(ConfigError, match="'Robot', which entity_labels does not declare"):
        load_config(["ingest/ontology=engineering", "+ingest.ontology.relation_types.DRIVES=[[Person,Robot]]"])
    with pytest.raises(ConfigError, match=r"ingest\.resolution\.fuzzy\.merge_treshold"):
        load_config(["ingest.resolution.fuzzy.merge_treshold=90"])


def test_evaluation_settings_are_validated() -> None:
    assert load_config().evaluation.recipes == ("all",)
    assert load_config(["evaluation.ks=[10,2,2]"]).evaluation.ks == (2, 10)
    with pytest.raises(ConfigError, match="every k must be at least 1"):
        load_config(["evaluation.ks=[0,5]"])


def test_a_misspelled_override_key_names_the_valid_keys() -> None:
    with pytest.raises(ConfigError, match=r"recipe\.limt is not a setting.*limit, methods"):
        load_config(["recipe.limt=3"])


def test_a_typo_inside_a_recipe_file_names_the_key(tmp_path: Path) -> None:
    conf = user_recipe(tmp_path, "mine", "methods: [chunk]\nlimt: 5\n")
    with pytest.raises(ConfigError, match=r"recipe\.limt: unknown key \(valid keys here: .*limit"):
        load_config(["recipe=mine"], user_dir=conf)


def test_a_value_of_the_wrong_type_says_what_it_got() -> None:
    with pytest.raises(ConfigError, match=r"recipe\.limit: .*integer.*'many'"):
        load_config(["recipe.limit=many"])


def test_an_unknown_method_raises_the_typed_error_with_valid_methods(tmp_path: Path) -> None:
    conf = user_recipe(tmp_path, "bad", "methods: [entity, graph_walk]\n")
    valid = "chunk, community, entity, fact, ppr, text2cypher"
    with pytest.raises(UnknownRecipeMethodError, match=rf"'graph_walk'.*Valid methods: {valid}"):
        load_config(["recipe=bad"], user_dir=conf)


def test_a_users_recipe_folder_adds_recipes_without_code(tmp_path: Path) -> None:
    conf = user_recipe(tmp_path, "mine", "methods: [chunk]\nlimit: 4\n")
    recipe = load_config(["recipe=mine"], user_dir=conf).recipe
    assert (recipe.name, recipe.methods, recipe.limit) == ("mine", (RetrievalMethod.CHUNK,), 4)
    assert load_config(["recipe=hybrid"], user_dir=conf).recipe.name == "hybrid", "built-ins stay available"


def test_conf_in_the_working_directory_is_searched(tmp_path: Path) -> None:
    user_recipe(tmp_path, "local", "methods: [entity]\n")
    (tmp_path / "myconf").rename(tmp_path / "conf")
    assert load_config(["recipe=local"]).recipe.methods == (RetrievalMethod.ENTITY,)


def test_presets_load_from_the_packaged_yaml() -> None:
    from agrag.pipelines import recipes

    assert load_recipe("hybrid") == recipes.HYBRID
    assert (packaged_conf_dir() / "recipe" / "hybrid.yaml").is_file()
    with pytest.raises(AttributeError):
        _ = recipes.NOT_A_PRESET


def test_the_qdrant_backend_without_a_url_says_which_variable_to_set(tmp_path: Path) -> None:
    from agrag.components.stores.vector_store import VectorCollection
    from agrag.pipelines.settings import AgragSettings
    from agrag.pipelines.store_factory import open_vector_store

    config = load_config(["vector_store=qdrant"])
    with pytest.raises(ConfigError, match="AGRAG_QDRANT_URL"):
        open_vector_store(VectorCollection.CHUNKS, config.vector_store, AgragSettings(data_dir=tmp_path), 384, 60)


def test_agrag_config_dir_adds_the_users_recipes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "elsewhere" / "recipe"
    mine.mkdir(parents=True)
    (mine / "mine.yaml").write_text("methods: [chunk, ppr]\nlimit: 4\n")
    monkeypatch.setenv("AGRAG_CONFIG_DIR", str(tmp_path / "elsewhere"))
    recipe = load_config(["recipe=mine"]).recipe
    assert (recipe.name, recipe.methods, recipe.limit) == ("mine", (RetrievalMethod.CHUNK, RetrievalMethod.PPR), 4)
    monkeypatch.setenv("AGRAG_CONFIG_DIR", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match=r"AGRAG_CONFIG_DIR=.*is not a folder"):
        load_config()


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("bfs_depht", "2", "bfs_depth"),
        ("comunity_top_k", "3", "community_top_k"),
        ("rerankr", "cross_encoder", "reranker"),
    ],
)
def test_a_typo_in_a_recipe_field_names_the_key_and_the_valid_ones(
    tmp_path: Path, field: str, value: str, named: str
) -> None:
    conf = user_recipe(tmp_path, "typo", f"methods: [entity]\n{field}: {value}\n")
    with pytest.raises(ConfigError, match=rf"recipe\.{field}: unknown key \(valid keys here: .*{named}"):
        load_config(["recipe=typo"], user_dir=conf)


def test_an_unknown_reranker_and_steps_without_entities_are_refused(tmp_path: Path) -> None:
    conf = user_recipe(tmp_path, "bad", "methods: [chunk]\nreranker: cross_encodr\n")
    with pytest.raises(ConfigError, match=r"unknown reranker 'cross_encodr' \(valid: cross_encoder, node_distance"):
        load_config(["recipe=bad"], user_dir=conf)
    conf = user_recipe(tmp_path, "walk", "methods: [chunk]\nbfs: true\n")
    with pytest.raises(ConfigError, match="bfs start from the entities found, but methods has no entity"):
        load_config(["recipe=walk"], user_dir=conf)
    conf = user_recipe(tmp_path, "passages", "methods: [entity]\nbfs_passages: true\n")
    with pytest.raises(ConfigError, match="bfs_passages is set but bfs is false: set bfs: true or remove"):
        load_config(["recipe=passages"], user_dir=conf)


def test_a_recipe_naming_a_method_twice_is_refused(tmp_path: Path) -> None:
    # Found by the fuzz suite (tests/adversarial/test_r3_fuzz.py, issue 43): an inline recipe with methods
    # [chunk, chunk] reached the pipeline builder, whose second component of that name failed the request with 500.
    conf = user_recipe(tmp_path, "twice", "methods: [entity, chunk, entity]\n")
    with pytest.raises(ConfigError, match="methods lists entity more than once: list each method once"):
        load_config(["recipe=twice"], user_dir=conf)
    with pytest.raises(ValidationError, match="methods lists chunk more than once"):
        RecipeConfig(methods=("chunk", "chunk"))  # type: ignore[arg-type]


def test_every_preset_is_importable_and_matches_the_spec() -> None:
    from agrag.pipelines import recipes

    expected = {
        "ENTITY": (("entity",), 10),
        "CHUNK": (("chunk",), 10),
        "HYBRID": (("entity", "chunk"), 10),
        "HYBRID_RERANKED": (("entity", "chunk"), 10),
        "GRAPH_EXPAND": (("entity",), 20),
        "THEMATIC": (("community",), 5),
        "TEXT2CYPHER": (("text2cypher",), 10),
        "FACT": (("fact",), 10),
    }
    for name, (methods, limit) in expected.items():
        recipe = getattr(recipes, name)
        assert (tuple(m.value for m in recipe.methods), recipe.limit) == (methods, limit), name
    assert recipes.GRAPH_EXPAND.bfs and recipes.GRAPH_EXPAND.community_expand
    assert recipes.HYBRID_RERANKED.reranker == "cross_encoder" and recipes.HYBRID_RERANKED.community_expand


def test_a_typo_under_a_group_with_choices_lists_the_valid_keys() -> None:
    with pytest.raises(ConfigError, match=r"ingest\.chunker\.max_chrs is not a setting \(valid keys here: .*max_chars"):
        load_config(["ingest.chunker.max_chrs=800"])


def test_a_composition_is_kept_until_a_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server composes per request: the same overrides on the same files come back at once, equal and unshared."""
    conf = tmp_path / "conf"
    (conf / "recipe").mkdir(parents=True)
    mine = conf / "recipe" / "mine.yaml"
    mine.write_text("methods: [chunk]\nlimit: 4\n")
    first = compose_raw(["recipe=mine"], conf)
    first["recipe"]["limit"] = 99  # a caller changing its copy
    assert compose_raw(["recipe=mine"], conf)["recipe"]["limit"] == 4
    mine.write_text("methods: [chunk]\nlimit: 6\n")  # the user edits the recipe while the server runs
    assert load_config(["recipe=mine"], user_dir=conf).recipe.limit == 6
    mine.write_text("methods: [chunk]\nlimit: ${oc.env:MY_LIMIT}\n")
    monkeypatch.setenv("MY_LIMIT", "7")
    assert load_config(["recipe=mine"], user_dir=conf).recipe.limit == 7
    monkeypatch.setenv("MY_LIMIT", "8")
    assert load_config(["recipe=mine"], user_dir=conf).recipe.limit == 8, "a resolver is read again"


@pytest.mark.parametrize("override", ["A" * 300 + "=1", "B" * 300, "recipe/" + "C" * 300 + "=x"])
def test_a_long_bare_word_or_key_is_a_config_error_not_a_traceback(override: str) -> None:
    """Found by the fuzz suite (issue 43): Hydra looked a 300-character word up as a file (ENAMETOOLONG)."""
    with pytest.raises(ConfigError):
        load_config([override])
