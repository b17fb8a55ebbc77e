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
