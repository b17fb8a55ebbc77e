"""embedder=hashed: deterministic unit vectors from the words, for benchmarks; kept apart from real models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.embedder_backend import EmbedderBackend
from agrag.components.embedders.hashed_text_encoder import HashedTextEncoder, hashed_dimension
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.embedders.sqlite_embedding_cache import SqliteEmbeddingCache
from agrag.components.errors import ConfigError, EmbeddingError
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.store_factory import embedding_dimension


def test_vectors_are_unit_deterministic_and_closer_for_shared_words() -> None:
    texts = ["Maria Chen wrote the Orion Planner", "the Orion Planner by Maria Chen", "battery dock queue", ""]
    first = np.array(SentenceTransformersTextEmbedder("hashed-384", backend="hashed").embed_batch(texts))
    again = HashedTextEncoder(384).encode(texts, batch_size=2)
    assert first.shape == (4, 384)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert np.allclose(first, again, atol=1e-6)  # a fresh encoder (another process) gives the same vectors
    same_words, other_words = float(first[0] @ first[1]), float(first[0] @ first[2])
    assert same_words > 0.75 and abs(other_words) < 0.3


def test_the_config_choice_and_its_refusals() -> None:
    config = load_config(["embedder=hashed"]).embedder
    assert (config.model, config.backend) == ("hashed-384", EmbedderBackend.HASHED)
    assert hashed_dimension("hashed-64") == 64
    for model in ("hashed-1", "hashed-x", "minilm"):
        with pytest.raises(EmbeddingError, match="hashed-<dimension>"):
            hashed_dimension(model)
    with pytest.raises(ComponentConfigError, match="embedder=hashed"):
        SentenceTransformersTextEmbedder("all-MiniLM-L6-v2", backend="hashed")
    with pytest.raises(ComponentConfigError, match="embedder=hashed"):
        SentenceTransformersTextEmbedder("hashed-384")  # the torch backend cannot load a hashed "model"
    with pytest.raises(ComponentConfigError, match="runs on the CPU"):
        SentenceTransformersTextEmbedder("hashed-384", "cuda", backend="hashed")


def test_a_hashed_data_dir_refuses_the_real_model_and_caches_stay_apart(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")
    try:
        assert embedding_dimension(graph, SentenceTransformersTextEmbedder("hashed-384", backend="hashed")) == 384
        with pytest.raises(ConfigError, match="hashed-384"):
            embedding_dimension(graph, SentenceTransformersTextEmbedder())  # never loaded: refused first
    finally:
        graph.close()
    plain = SqliteEmbeddingCache(tmp_path / "cache", "all-MiniLM-L6-v2")
    quantized = SqliteEmbeddingCache(tmp_path / "cache", "all-MiniLM-L6-v2", EmbedderBackend.ONNX_INT8.vector_variant)
    plain.put_many(["a text"], [[1.0, 0.0]])
    assert plain.path != quantized.path and quantized.get_many(["a text"]) == {}
