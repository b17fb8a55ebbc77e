"""embedder.backend=onnx: the model exported once from the local weights, and the same vectors as torch."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.embedder_backend import EmbedderBackend
from agrag.components.embedders.onnx_sentence_encoder import OnnxSentenceEncoder
from agrag.components.embedders.sentence_transformers_text_embedder import (
    SentenceTransformersTextEmbedder,
    resolve_model_path,
)
from agrag.components.errors import EmbeddingError
from agrag.pipelines.config_loader import load_config

TEXTS = [
    "Who wrote the Orion Planner?",
    "Maria Chen leads the planning team in Lyon; Tom Okafor maintains Vega Perception. " * 40,  # over 256 tokens
    "x",
    "",
    "Ünïcode façade — 東京 and emoji 🚀 in one line",
]


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx")


def test_onnx_vectors_equal_torch_vectors(embedder: SentenceTransformersTextEmbedder, onnx_dir: Path) -> None:
    onnx = SentenceTransformersTextEmbedder(backend="onnx", onnx_dir=str(onnx_dir))
    ours, theirs = np.array(onnx.embed_batch(TEXTS)), np.array(embedder.embed_batch(TEXTS))
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert (ours * theirs).sum(axis=1).min() > 0.99999  # the long text is truncated exactly where torch cuts it
    assert onnx.dimension == 384 and onnx.backend == "onnx"
    assert len(list(onnx_dir.rglob("model.onnx"))) == 1


@pytest.mark.needs_model
def test_the_export_is_made_once_and_reused(onnx_dir: Path) -> None:
    model = resolve_model_path("all-MiniLM-L6-v2")
    OnnxSentenceEncoder.load(model, onnx_dir)
    (exported,) = onnx_dir.rglob("model.onnx")
    made = exported.stat().st_mtime_ns
    again = OnnxSentenceEncoder.load(model, onnx_dir)
    assert exported.stat().st_mtime_ns == made
    assert not list(onnx_dir.rglob("*.part")), "no half-written export is left"
    batch = again.encode(TEXTS[:3], batch_size=2)
    assert batch.shape == (3, 384)


def test_the_config_choice_and_its_refusals(tmp_path: Path) -> None:
    assert load_config(["embedder=minilm_onnx"]).embedder.backend is EmbedderBackend.ONNX
    assert load_config([]).embedder.backend is EmbedderBackend.TORCH
    with pytest.raises(ComponentConfigError, match=r"embedder\.device=cpu"):
        SentenceTransformersTextEmbedder(device="cuda", backend="onnx")
    with pytest.raises(ComponentConfigError, match="Unknown"):
        SentenceTransformersTextEmbedder(backend="tensorrt")
    cls_pooled = tmp_path / "cls-model"
    (cls_pooled / "1_Pooling").mkdir(parents=True)
    (cls_pooled / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}), encoding="utf-8"
    )
    with pytest.raises(EmbeddingError, match=r"embedder\.backend=torch"):
        OnnxSentenceEncoder.load(cls_pooled, tmp_path / "exports")
    assert not (tmp_path / "exports").exists(), "nothing is exported for a model it cannot run"
