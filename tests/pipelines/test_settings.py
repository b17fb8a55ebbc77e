from pathlib import Path

import pytest

from agrag.components.errors import ConfigError
from agrag.pipelines.settings import load_agrag_settings, load_retrieval_settings


def test_defaults() -> None:
    settings = load_agrag_settings()
    assert settings.data_dir == Path(".agrag")
    assert settings.graph_path == Path(".agrag/graph.kuzu")
    assert load_retrieval_settings().rrf_k == 60


def test_environment_and_dotenv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGRAG_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / ".env").write_text("RETRIEVAL_RRF_K=10\n", encoding="utf-8")
    assert load_agrag_settings().vectors_dir == tmp_path / "data" / "vectors"
    assert load_retrieval_settings().rrf_k == 10


@pytest.mark.parametrize("value", ["abc", "0"])
def test_a_bad_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("RETRIEVAL_RRF_K", value)
    with pytest.raises(ConfigError, match="RETRIEVAL_RRF_K"):
        load_retrieval_settings()


def test_the_embedding_cache_keeps_the_set_number_of_queries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from agrag.pipelines.config_models import EmbedderConfig
    from agrag.pipelines.store_factory import open_embedding_cache

    monkeypatch.setenv("AGRAG_EMBEDDING_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("AGRAG_EMBEDDING_CACHE_QUERIES", "25")
    cache = open_embedding_cache(load_agrag_settings(), EmbedderConfig(model="all-MiniLM-L6-v2"))
    assert cache is not None and cache.query_capacity == 25
    cache.close()
    monkeypatch.setenv("AGRAG_EMBEDDING_CACHE_QUERIES", "-1")
    with pytest.raises(ConfigError, match="AGRAG_EMBEDDING_CACHE_QUERIES"):
        load_agrag_settings()
