"""embedder.backend=onnx and onnx_int8: the model exported once from the local weights, the same vectors as torch, and
an int8 model derived once from that export, with vectors close to torch's and kept apart from them in the cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.embedder_backend import EmbedderBackend
from agrag.components.embedders.onnx_export import FP32_FILE, INT8_FILE, exported_model, model_key
from agrag.components.embedders.onnx_sentence_encoder import OnnxSentenceEncoder
from agrag.components.embedders.sentence_transformers_text_embedder import (
    SentenceTransformersTextEmbedder,
    resolve_model_path,
)
from agrag.components.embedders.sqlite_embedding_cache import SqliteEmbeddingCache
from agrag.components.errors import EmbeddingError
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.embedder_factory import embedder_for
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_embedding_cache

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
    int8 = load_config(["embedder=minilm_onnx_int8"]).embedder
    assert (int8.backend, int8.model, int8.device) == (EmbedderBackend.ONNX_INT8, "all-MiniLM-L6-v2", "cpu")
    for backend in ("onnx", "onnx_int8"):
        with pytest.raises(ComponentConfigError, match=r"embedder\.device=cpu"):
            SentenceTransformersTextEmbedder(device="cuda", backend=backend)
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


def test_int8_vectors_are_close_to_torch_vectors(embedder: SentenceTransformersTextEmbedder, onnx_dir: Path) -> None:
    int8 = SentenceTransformersTextEmbedder(backend="onnx_int8", onnx_dir=str(onnx_dir))
    ours, theirs = np.array(int8.embed_batch(TEXTS)), np.array(embedder.embed_batch(TEXTS))
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = (ours * theirs).sum(axis=1)
    # measured: 0.9948 ("") to 0.9991 here; mean 0.9987, lowest 0.9979 over bench/embedder_backends.py's 1,000
    # passages (0.9946 mean without the float32 outlier channels). Close, not equal: it keeps its own cache file.
    assert cosines.min() > 0.99 and cosines.mean() > 0.995
    assert cosines.min() < 0.9999, "the int8 model, not the plain export, computed these"
    (made,) = onnx_dir.rglob(INT8_FILE)
    assert (made.parent / FP32_FILE).exists() and made.stat().st_size < (made.parent / FP32_FILE).stat().st_size


@pytest.mark.needs_model
def test_the_int8_model_is_made_once_from_the_export_and_reused(onnx_dir: Path) -> None:
    model = resolve_model_path("all-MiniLM-L6-v2")
    OnnxSentenceEncoder.load(model, onnx_dir, quantized=True)
    (quantized,) = onnx_dir.rglob(INT8_FILE)
    (export,) = onnx_dir.rglob(FP32_FILE)
    made = quantized.stat().st_mtime_ns, export.stat().st_mtime_ns
    again = OnnxSentenceEncoder.load(model, onnx_dir, quantized=True)
    assert (quantized.stat().st_mtime_ns, export.stat().st_mtime_ns) == made
    assert not list(onnx_dir.rglob("*.part")), "no half-written model is left"
    assert again.encode(TEXTS[:3], batch_size=2).shape == (3, 384)


@pytest.mark.needs_model
def test_the_int8_model_keeps_the_outlier_channels_in_float32(onnx_dir: Path) -> None:
    OnnxSentenceEncoder.load(resolve_model_path("all-MiniLM-L6-v2"), onnx_dir, quantized=True)
    (quantized,) = onnx_dir.rglob(INT8_FILE)
    nodes = onnx.load(str(quantized)).graph.node
    float32 = [n for n in nodes if n.op_type == "MatMul" and n.name.endswith("/outliers")]
    int8 = [n for n in nodes if n.op_type in ("DynamicQuantizeMatMul", "MatMulIntegerToFloat", "MatMulInteger")]
    assert len(float32) == len(int8) == 36  # 6 layers of query, key, value, attention output, FFN in and out
    picked = [n for n in nodes if n.op_type == "Gather" and n.name.endswith("/pick")]
    assert len(picked) == 24  # the query, key and value layers share one input: 4 distinct inputs per layer


def test_a_failed_quantization_leaves_nothing_to_load(tmp_path: Path) -> None:
    model = tmp_path / "some-model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    folder = tmp_path / "exports" / model_key(model)
    folder.mkdir(parents=True)
    (folder / FP32_FILE).write_bytes(b"not an ONNX model")  # an export is there, so none is made
    with pytest.raises(EmbeddingError, match="Could not quantize"):
        exported_model(model, tmp_path / "exports", quantized=True)
    assert [p.name for p in folder.iterdir()] == [FP32_FILE], "no int8 model and no .part file"


@pytest.mark.needs_model
def test_the_int8_backend_never_reads_torch_vectors_from_the_cache(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder, onnx_dir: Path
) -> None:
    settings = AgragSettings(embedding_cache_dir=tmp_path / "cache", onnx_dir=onnx_dir)
    torch_cache = open_embedding_cache(settings, load_config([]).embedder)
    config = load_config(["embedder=minilm_onnx_int8"]).embedder
    int8_cache = open_embedding_cache(settings, config)
    assert torch_cache is not None and int8_cache is not None
    assert int8_cache.path != torch_cache.path
    assert int8_cache.path == SqliteEmbeddingCache(tmp_path / "cache", "all-MiniLM-L6-v2", "int8").path
    text = TEXTS[0]
    torch_vector = embedder.embed_batch([text])[0]
    torch_cache.put_many([text], [torch_vector])
    int8 = embedder_for(config, settings, cache=int8_cache)
    vector = int8.embed_batch([text])[0]
    assert vector != pytest.approx(torch_vector, abs=1e-6), "computed by the int8 model, not read from torch's file"
    assert float(np.dot(vector, torch_vector)) > 0.98
    assert int8_cache.get_many([text]) == {0: pytest.approx(vector, abs=1e-6)}
