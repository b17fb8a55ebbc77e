"""``OnnxSentenceEncoder``: a mean-pooling sentence-transformers model run by ONNX Runtime instead of torch.

The transformer is exported once from the local weights (``torch.onnx.export``; nothing is downloaded) into an
export folder, keyed by the model's files, and loaded from there afterwards. Tokenization uses the model's own
``tokenizer.json`` with its ``max_seq_length``; pooling and normalization are done here as the model's modules do
them. The vectors equal torch's to float32 rounding (cosine above 0.99999), so a data dir built with one backend is
searched with the other.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agrag.components.errors import EmbeddingError

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_FILES_HASHED = ("config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json", "modules.json")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"The ONNX embedder could not read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise EmbeddingError(f"The ONNX embedder expected a JSON object in {path}.")
    return data


def _model_key(model_path: Path) -> str:
    """A name for the export of this model: its folder name and a hash of its files' names, sizes and times."""
    digest = hashlib.sha256()
    for name in _FILES_HASHED:
        file = model_path / name
        if file.exists():
            stat = file.stat()
            digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return f"{model_path.name}-{digest.hexdigest()[:16]}"


def _export(model_path: Path, target: Path) -> None:
    """Export the model's transformer to ``target`` (written to a temporary file, then renamed into place)."""
    import torch  # noqa: PLC0415 - only for the one-time export
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415

    transformer: Any = SentenceTransformer(str(model_path), device="cpu")[0].auto_model
    transformer.eval()

    class _LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.transformer(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    sample = torch.ones((2, 8), dtype=torch.int64)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".onnx.part")
    os.close(handle)
    try:
        # the TorchScript exporter warns that it is the older one, and about an indexing op this model does not hit
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _LastHiddenState(),
                (sample, sample, torch.zeros_like(sample)),
                temporary,
                input_names=list(_INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        os.replace(temporary, target)  # another process exporting the same model writes the same file
    except Exception as exc:
        Path(temporary).unlink(missing_ok=True)
        raise EmbeddingError(f"Could not export {model_path} to ONNX: {exc}") from exc


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
    def load(cls, model_path: Path, export_dir: Path) -> OnnxSentenceEncoder:
        """Load the export of ``model_path`` from ``export_dir``, exporting it there first if it is not there yet.

        Raises:
            EmbeddingError: the model does not mean-pool (the only pooling this backend does), or cannot be
                exported or loaded.
        """
        pooling = _read_json(model_path / "1_Pooling" / "config.json")
        if not pooling.get("pooling_mode_mean_tokens") or any(
            pooling.get(mode) for mode in ("pooling_mode_cls_token", "pooling_mode_max_tokens")
        ):
            raise EmbeddingError(
                f"embedder.backend=onnx runs mean-pooling models only, and {model_path} pools otherwise. "
                "Use embedder.backend=torch for it."
            )
        max_length = int(_read_json(model_path / "sentence_bert_config.json").get("max_seq_length", 512))
        target = export_dir / _model_key(model_path) / "model.onnx"
        if not target.exists():
            _export(model_path, target)
        import onnxruntime  # noqa: PLC0415 - loaded only for this backend
        from tokenizers import Tokenizer  # noqa: PLC0415

        try:
            session = onnxruntime.InferenceSession(str(target), providers=["CPUExecutionProvider"])
            tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
        except Exception as exc:
            raise EmbeddingError(f"Could not load the ONNX export {target}: {exc}") from exc
        tokenizer.enable_truncation(max_length)
        tokenizer.no_padding()
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
        encodings = self._tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        feeds = {name: np.zeros((len(texts), width), dtype=np.int64) for name in _INPUTS}
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            feeds["input_ids"][row, :n] = encoding.ids
            feeds["attention_mask"][row, :n] = encoding.attention_mask
            feeds["token_type_ids"][row, :n] = encoding.type_ids
        hidden = self._session.run(None, feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        vectors: np.ndarray = (pooled / norms).astype(np.float32)
        return vectors
