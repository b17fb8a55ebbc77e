"""embedder.backend=torch runs plain mean-pooling BERT models (the bundled one among them) with torch alone: the same
vectors as sentence-transformers, without importing it; any other model still goes to sentence-transformers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from agrag.components.embedders.sentence_transformers_text_embedder import (
    SentenceTransformersTextEmbedder,
    resolve_model_path,
)
from agrag.components.embedders.torch_bert_sentence_encoder import TorchBertSentenceEncoder
from agrag.components.errors import EmbeddingError

pytestmark = pytest.mark.needs_model

TEXTS = [
    "Who wrote the Orion Planner?",
    "Maria Chen leads the planning team in Lyon; Tom Okafor maintains Vega Perception. " * 40,  # over 256 tokens
    "x",
    "",
    "   padded on both sides   ",
    "Ünïcode façade — 東京 and emoji 🚀 in one line",
    *[f"Passage {i}: the Atlas Controller was patched after incident {i} in Lyon." * (1 + i % 4) for i in range(70)],
]


@pytest.fixture(scope="module")
def bundled() -> Path:
    return resolve_model_path("all-MiniLM-L6-v2")


def _copy(model: Path, target: Path) -> Path:
    """A model folder that links the bundled weights and copies the small files, so a test may edit those."""
    target.mkdir()
    for item in model.iterdir():
        if item.is_dir():
            shutil.copytree(item, target / item.name)
        elif item.suffix == ".safetensors":
            (target / item.name).symlink_to(item)
        else:
            shutil.copy(item, target / item.name)
    return target


def test_vectors_equal_sentence_transformers(bundled: Path) -> None:
    light = TorchBertSentenceEncoder.load(bundled, "cpu")
    assert light is not None and light.get_embedding_dimension() == 384
    reference = SentenceTransformer(str(bundled), device="cpu")
    # Batches of 8 mix lengths, so padding is exercised; the long text is cut where sentence-transformers cuts it.
    ours = light.encode(TEXTS, batch_size=8, normalize_embeddings=True)
    theirs = reference.encode(TEXTS, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.abs(ours - theirs).max() < 1e-5
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    # The model's Normalize module normalizes even when the call does not ask for it, as sentence-transformers does.
    assert np.abs(light.encode(TEXTS[:3], batch_size=2) - theirs[:3]).max() < 1e-5


def test_the_embedder_does_not_import_sentence_transformers() -> None:
    script = (
        "import sys\n"
        "from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder\n"
        "e = SentenceTransformersTextEmbedder()\n"
        "v = e.embed_query('Who wrote the Orion Planner?')\n"
        "print(len(v), e.dimension, 'sentence_transformers' in sys.modules, 'transformers' in sys.modules)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-c", script]
    done = subprocess.run(command, check=False, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["384", "384", "False", "False"]


def test_other_models_go_to_sentence_transformers(bundled: Path, tmp_path: Path) -> None:
    cls_pooled = _copy(bundled, tmp_path / "cls-pooled")
    pooling = json.loads((cls_pooled / "1_Pooling" / "config.json").read_text())
    pooling.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    (cls_pooled / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    assert TorchBertSentenceEncoder.load(cls_pooled, "cpu") is None

    embedder = SentenceTransformersTextEmbedder(model=str(cls_pooled))
    embedder.warm_up()
    assert isinstance(embedder._model, SentenceTransformer)
    mean = SentenceTransformersTextEmbedder().embed_query(TEXTS[0])
    cls = embedder.embed_query(TEXTS[0])
    assert len(cls) == 384 and float(np.dot(mean, cls)) < 0.99, "the CLS model pools differently"


def test_a_model_of_another_architecture_is_not_run_as_bert(bundled: Path, tmp_path: Path) -> None:
    other = _copy(bundled, tmp_path / "other")
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "position_embedding_type": "relative_key"}))
    assert TorchBertSentenceEncoder.load(other, "cpu") is None
    (other / "config.json").write_text(json.dumps({**config, "model_type": "mpnet"}))
    assert TorchBertSentenceEncoder.load(other, "cpu") is None


def test_damaged_weights_are_a_clear_error(bundled: Path, tmp_path: Path) -> None:
    damaged = _copy(bundled, tmp_path / "damaged")
    (damaged / "model.safetensors").unlink()
    (damaged / "model.safetensors").write_bytes((bundled / "model.safetensors").read_bytes()[:4096])
    with pytest.raises(EmbeddingError, match=r"Could not load the embedding model in .*damaged"):
        TorchBertSentenceEncoder.load(damaged, "cpu")
    with pytest.raises(EmbeddingError, match="Could not load the embedding model"):
        SentenceTransformersTextEmbedder(model=str(damaged)).warm_up()


def test_progress_bar_when_asked(bundled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    light = TorchBertSentenceEncoder.load(bundled, "cpu")
    assert light is not None
    light.encode(TEXTS[:20], batch_size=8, show_progress_bar=True)
    assert "Batches" in capsys.readouterr().err
    light.encode(TEXTS[:20], batch_size=8)
    assert "Batches" not in capsys.readouterr().err
