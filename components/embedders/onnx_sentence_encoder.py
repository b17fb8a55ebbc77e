"""``OnnxSentenceEncoder``: a mean-pooling sentence-transformers model run by ONNX Runtime instead of torch.

The transformer is exported once from the local weights (``torch.onnx.export``; nothing is downloaded) into an
export folder, keyed by the model's files, and loaded from there afterwards (see ``onnx_export``). Tokenization uses
the model's own ``tokenizer.json`` with its ``max_seq_length``; pooling and normalization are done here as the model's
modules do them. The vectors of the plain export equal torch's to float32 rounding (cosine above 0.99999), so a data
dir built with one backend is searched with the other; those of the int8 export (``quantized=True``) are close to
torch's (cosine about 0.995), not equal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agrag.components.embedders.onnx_export import exported_model
from agrag.components.embedders.tokenized_batch import padded_inputs, truncating_tokenizer
from agrag.components.errors import EmbeddingError


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"The ONNX embedder could not read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise EmbeddingError(f"The ONNX embedder expected a JSON object in {path}.")
    return data


class OnnxSentenceEncoder:
    """Encodes texts like ``SentenceTransformer.encode`` (mean pooling, then L2 normalization), with ONNX Runtime.

    Usage:
        ```python
        encoder = OnnxSentenceEncoder.load(Path(model_folder), Path("~/.cache/agrag/onnx").expanduser())
        vectors = encoder.encode(["a passage", "another"], batch_size=64)
        ```
    """

    def __init__(self, session: Any, tokenizer: Any, dimension: int) -> None:
        """Use an open ONNX Runtime session and a ``tokenizers.Tokenizer`` set to truncate (see ``load``)."""
        self._session = session
        self._tokenizer = tokenizer
        self._dimension = dimension

    @classmethod
    def load(cls, model_path: Path, export_dir: Path, *, quantized: bool = False) -> OnnxSentenceEncoder:
        """Load the export of ``model_path`` from ``export_dir``, exporting it there first if it is not there yet.

        With ``quantized``, load its int8 form instead (made once from the export, next to it).

        Raises:
            EmbeddingError: the model does not mean-pool (the only pooling this backend does), or cannot be
                exported or loaded.
        """
        pooling = _read_json(model_path / "1_Pooling" / "config.json")
        if not pooling.get("pooling_mode_mean_tokens") or any(
            pooling.get(mode) for mode in ("pooling_mode_cls_token", "pooling_mode_max_tokens")
        ):
            raise EmbeddingError(
                f"embedder.backend={'onnx_int8' if quantized else 'onnx'} runs mean-pooling models only, and "
                f"{model_path} pools otherwise. "
                "Use embedder.backend=torch for it."
            )
        max_length = int(_read_json(model_path / "sentence_bert_config.json").get("max_seq_length", 512))
        target = exported_model(model_path, export_dir, quantized=quantized)
        import onnxruntime  # noqa: PLC0415 - loaded only for this backend

        try:
            session = onnxruntime.InferenceSession(str(target), providers=["CPUExecutionProvider"])
            tokenizer = truncating_tokenizer(model_path / "tokenizer.json", max_length)
        except Exception as exc:
            raise EmbeddingError(f"Could not load the ONNX export {target}: {exc}") from exc
        return cls(session, tokenizer, int(pooling.get("word_embedding_dimension", 0)))

    def get_embedding_dimension(self) -> int:
        """Length of the vectors."""
        return self._dimension

    def encode(self, texts: Sequence[str], batch_size: int, **_options: object) -> np.ndarray:
        """L2-normalized mean-pooled vectors of ``texts``, one row each, in order.

        Texts are batched by length (as sentence-transformers does), so little time goes to padding.
        """
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._batch([texts[i] for i in rows])
        return out

    def _batch(self, texts: list[str]) -> np.ndarray:
        feeds = padded_inputs(self._tokenizer, texts)
        hidden = self._session.run(None, feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        vectors: np.ndarray = (pooled / norms).astype(np.float32)
        return vectors
