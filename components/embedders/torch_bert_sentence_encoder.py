"""``TorchBertSentenceEncoder``: a mean-pooling BERT sentence model run by plain torch, without sentence-transformers.

Importing sentence-transformers (and through it transformers, scikit-learn and scipy) takes about 3 s of CPU, three
quarters of the time an ``agrag`` process spends loading the bundled model, and every ``agrag serve``, ``agrag mcp``
and in-process CLI command paid it at start. A BERT encoder is a few matrix products per layer, so for models that are
exactly that (``modules.json``: Transformer, mean Pooling, optional Normalize; ``config.json``: a BERT with absolute
positions and GELU) this module reads the weights from ``model.safetensors`` and the tokenizer from ``tokenizer.json``
and runs the same arithmetic itself. Its vectors equal sentence-transformers' to float32 rounding (cosine above
0.99999; ``tests/components/embedders/test_torch_bert_backend.py`` compares them). ``load`` returns ``None`` for any
other model, which sentence-transformers then loads.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agrag.components.embedders.tokenized_batch import padded_inputs, truncating_tokenizer
from agrag.components.errors import EmbeddingError

_MODULES = (
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
)
_LAYER_PARTS = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "attention.output.LayerNorm",
    "intermediate.dense",
    "output.dense",
    "output.LayerNorm",
)
_POOLING_MODES = ("cls_token", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken")


def _json(path: Path, kind: type[dict[str, Any]] | type[list[Any]] = dict) -> Any:
    """The JSON value in ``path`` if it is a ``kind``, else ``None`` (also for a missing or unreadable file)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, kind) else None


def _plain_bert(model_path: Path) -> tuple[dict[str, Any], int, bool] | None:
    """The BERT config, the max sequence length and whether vectors are normalized, if this module can run the model."""
    modules = _json(model_path / "modules.json", list) or []
    types = tuple(m.get("type") if isinstance(m, dict) else None for m in modules)
    if types not in (_MODULES[:2], _MODULES) or modules[0].get("path") not in ("", None):
        return None
    config = _json(model_path / "config.json")
    pooling = _json(model_path / str(modules[1].get("path", "")) / "config.json")
    if config is None or pooling is None or not (model_path / "model.safetensors").is_file():
        return None
    if not pooling.get("pooling_mode_mean_tokens") or any(pooling.get(f"pooling_mode_{m}") for m in _POOLING_MODES):
        return None
    if (
        config.get("model_type") != "bert"
        or config.get("hidden_act") != "gelu"
        or config.get("position_embedding_type", "absolute") != "absolute"
        or not (model_path / "tokenizer.json").is_file()
    ):
        return None
    limit = int(config.get("max_position_embeddings", 512))
    max_length = (_json(model_path / "sentence_bert_config.json") or {}).get("max_seq_length") or limit
    return config, min(int(max_length), limit), len(types) == len(_MODULES)


class TorchBertSentenceEncoder:
    """Encodes texts like ``SentenceTransformer.encode`` for plain mean-pooling BERT models, with torch alone.

    Usage:
        ```python
        encoder = TorchBertSentenceEncoder.load(Path(model_folder), "cpu")  # None: not a plain BERT model
        vectors = encoder.encode(["a passage", "another"], batch_size=64, normalize_embeddings=True)
        ```
    """

    def __init__(self, weights: dict[str, Any], config: dict[str, Any], tokenizer: Any, *, normalize: bool) -> None:
        """Use loaded ``weights`` (torch tensors by their BERT names) and a truncating ``tokenizers.Tokenizer``."""
        self._w = weights
        self._layers = int(config["num_hidden_layers"])
        self._heads = int(config["num_attention_heads"])
        self._hidden = int(config["hidden_size"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self._tokenizer = tokenizer
        self._normalize = normalize

    @classmethod
    def load(cls, model_path: Path, device: str) -> TorchBertSentenceEncoder | None:
        """The encoder of ``model_path`` on ``device``, or ``None`` if the model is not a plain mean-pooling BERT.

        Raises:
            EmbeddingError: the model is such a BERT but its files or the device could not be loaded.
        """
        plain = _plain_bert(model_path)
        if plain is None:
            return None
        config, max_length, normalize = plain
        from safetensors.torch import load_file  # noqa: PLC0415

        try:
            weights = {
                name.removeprefix("bert."): tensor.to(device)
                for name, tensor in load_file(str(model_path / "model.safetensors")).items()
            }
            tokenizer = truncating_tokenizer(model_path / "tokenizer.json", max_length)
        except Exception as exc:  # safetensors, tokenizers and torch devices each raise their own errors
            raise EmbeddingError(f"Could not load the embedding model in {model_path}: {exc}") from exc
        missing = [name for name in _required(int(config["num_hidden_layers"])) if name not in weights]
        if missing:
            raise EmbeddingError(f"The embedding model in {model_path} lacks weights: {', '.join(missing[:3])}")
        return cls(weights, config, tokenizer, normalize=normalize)

    def get_embedding_dimension(self) -> int:
        """Length of the vectors."""
        return self._hidden

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int,
        *,
        normalize_embeddings: bool = False,
        show_progress_bar: bool = False,
        **_options: object,
    ) -> np.ndarray:
        """Mean-pooled vectors of ``texts``, one row each, in order (L2-normalized if the model or the call says so).

        Texts are batched by length, longest first (as sentence-transformers does), so little time goes to padding.
        """
        import torch  # noqa: PLC0415

        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), self._hidden), dtype=np.float32)
        starts = range(0, len(order), batch_size)
        if show_progress_bar:
            from tqdm.auto import tqdm  # noqa: PLC0415 - the same bar sentence-transformers shows

            starts = tqdm(starts, desc="Batches")
        with torch.inference_mode():
            for start in starts:
                rows = order[start : start + batch_size]
                pooled = self._batch([str(texts[i]).strip() for i in rows])
                if self._normalize or normalize_embeddings:
                    pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out[rows] = pooled.float().cpu().numpy()
        return out

    def _batch(self, texts: list[str]) -> Any:
        import torch  # noqa: PLC0415

        w = self._w
        device = w["embeddings.word_embeddings.weight"].device
        feeds = {name: torch.from_numpy(a).to(device) for name, a in padded_inputs(self._tokenizer, texts).items()}
        ids, types, mask = feeds["input_ids"], feeds["token_type_ids"], feeds["attention_mask"]
        width = ids.shape[1]
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.token_type_embeddings.weight"][types]
            + w["embeddings.position_embeddings.weight"][:width].unsqueeze(0)
        )
        x = self._norm(x, "embeddings.LayerNorm")
        # Padding keys get a large negative score, so softmax gives them no weight (as transformers' mask does).
        bias = ((1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min).to(x.dtype)
        for i in range(self._layers):
            x = self._layer(x, bias, f"encoder.layer.{i}.")
        weights = mask.unsqueeze(-1).to(x.dtype)
        return (x * weights).sum(dim=1) / torch.clamp(weights.sum(dim=1), min=1e-9)

    def _layer(self, x: Any, bias: Any, p: str) -> Any:
        from torch.nn import functional  # noqa: PLC0415

        w = self._w
        batch, width = x.shape[0], x.shape[1]
        head_size = self._hidden // self._heads

        def heads(name: str) -> Any:
            y = functional.linear(x, w[f"{p}attention.self.{name}.weight"], w[f"{p}attention.self.{name}.bias"])
            return y.view(batch, width, self._heads, head_size).transpose(1, 2)

        context = functional.scaled_dot_product_attention(heads("query"), heads("key"), heads("value"), attn_mask=bias)
        context = context.transpose(1, 2).reshape(batch, width, self._hidden)
        attended = functional.linear(
            context, w[f"{p}attention.output.dense.weight"], w[f"{p}attention.output.dense.bias"]
        )
        x = self._norm(attended + x, f"{p}attention.output.LayerNorm")
        inner = functional.gelu(
            functional.linear(x, w[f"{p}intermediate.dense.weight"], w[f"{p}intermediate.dense.bias"])
        )
        out = functional.linear(inner, w[f"{p}output.dense.weight"], w[f"{p}output.dense.bias"])
        return self._norm(out + x, f"{p}output.LayerNorm")

    def _norm(self, x: Any, name: str) -> Any:
        from torch.nn import functional  # noqa: PLC0415

        return functional.layer_norm(x, (self._hidden,), self._w[f"{name}.weight"], self._w[f"{name}.bias"], self._eps)


def _required(layers: int) -> list[str]:
    names = [
        "embeddings.word_embeddings.weight",
        "embeddings.position_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
        "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias",
    ]
    for i in range(layers):
        for part in _LAYER_PARTS:
            names += [f"encoder.layer.{i}.{part}.weight", f"encoder.layer.{i}.{part}.bias"]
    return names
