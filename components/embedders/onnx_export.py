"""The ONNX files the ONNX embedder runs: the model's transformer exported from its local weights, and its int8 form.

Both are made once per model, in an export folder keyed by the model's files and by ``EXPORT_FORMAT``, each written
to a temporary file and renamed into place, so a crash never leaves a half-written model to load and two processes
exporting the same model at once write the same file.

* ``model.onnx`` (``embedder.backend=onnx``): the transformer as ``torch.onnx.export`` traces it, with eager attention
  and a precomputed additive mask, so the graph holds plain MatMul and Softmax nodes that ONNX Runtime runs faster than
  the exported scaled-dot-product attention and the model's own mask builder. Its vectors equal torch's.
* ``model-int8.onnx`` (``embedder.backend=onnx_int8``): ``model.onnx`` with its linear layers run in int8 (see
  ``onnx_quantize``). Faster again; its vectors are close to torch's (cosine about 0.999), not equal.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agrag.components.embedders.tokenized_batch import INPUTS
from agrag.components.errors import EmbeddingError

FP32_FILE = "model.onnx"
INT8_FILE = "model-int8.onnx"
# Part of the export folder's name: a change to how the files are made gets a new folder, never an old file.
EXPORT_FORMAT = "eager-attention, int8 with float32 outlier channels, 1"
_FILES_HASHED = ("config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json", "modules.json")
_MASKED = -10000.0  # added to the attention scores of padding; exp() of it is 0 in float32


def model_key(model_path: Path) -> str:
    """A folder name for the exports of this model: its name, and a hash of ``EXPORT_FORMAT`` and its files' stats."""
    digest = hashlib.sha256(EXPORT_FORMAT.encode())
    for name in _FILES_HASHED:
        file = model_path / name
        if file.exists():
            stat = file.stat()
            digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return f"{model_path.name}-{digest.hexdigest()[:16]}"


def exported_model(model_path: Path, export_dir: Path, *, quantized: bool) -> Path:
    """The ONNX file to run for ``model_path`` (int8 when ``quantized``), made first if it is not there yet.

    Raises:
        EmbeddingError: the export or the quantization failed.
    """
    folder = export_dir / model_key(model_path)
    fp32 = folder / FP32_FILE
    if not fp32.exists():
        _write_once(fp32, lambda part: _export(model_path, part), f"Could not export {model_path} to ONNX")
    if not quantized:
        return fp32
    int8 = folder / INT8_FILE
    if not int8.exists():
        _write_once(int8, lambda part: _quantize(fp32, model_path, part), f"Could not quantize {fp32} to int8")
    return int8


def _write_once(target: Path, write: Callable[[Path], None], failure: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".onnx.part")
    os.close(handle)
    try:
        write(Path(temporary))
        os.replace(temporary, target)
    except Exception as exc:
        Path(temporary).unlink(missing_ok=True)
        raise EmbeddingError(f"{failure}: {exc}") from exc


def _export(model_path: Path, target: Path) -> None:
    """Export the model's transformer (last hidden state) to ``target``."""
    import torch  # noqa: PLC0415 - only for the one-time export
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415

    transformer: Any = SentenceTransformer(str(model_path), device="cpu")[0].auto_model
    transformer.eval()

    class _LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            # a 4D mask is used as given; the model's own builder would export as dozens of index operations
            additive = (1.0 - attention_mask.to(torch.float32)[:, None, None, :]) * _MASKED
            out = self.transformer(input_ids=input_ids, attention_mask=additive, token_type_ids=token_type_ids)
            return out.last_hidden_state

    wrapper = _LastHiddenState()
    ids = torch.tensor([[101, 2054, 2003, 1037, 7099, 102], [101, 7099, 102, 0, 0, 0]], dtype=torch.int64)
    mask = (ids != 0).to(torch.int64)
    with torch.no_grad():
        expected = transformer(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids))
        transformer.set_attn_implementation("eager")
        got = wrapper(ids, mask, torch.zeros_like(ids))
    kept = mask.bool()
    if not torch.allclose(got[kept], expected.last_hidden_state[kept], atol=1e-4):
        raise EmbeddingError(
            f"{model_path} computes other states with eager attention and an additive mask; "
            "use embedder.backend=torch for it."
        )
    sample = torch.ones((2, 8), dtype=torch.int64)
    # the TorchScript exporter warns that it is the older one, and about an indexing op this model does not hit
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper,
            (sample, sample, torch.zeros_like(sample)),
            str(target),
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes={name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")},
            opset_version=17,
            dynamo=False,
        )


def _quantize(source: Path, model_path: Path, target: Path) -> None:
    from agrag.components.embedders.onnx_quantize import quantize_int8  # noqa: PLC0415 - it imports this module

    quantize_int8(source, model_path / "tokenizer.json", target)
