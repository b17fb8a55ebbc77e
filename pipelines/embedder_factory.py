"""``embedder_for``: the embedder of the configured model and backend, with the settings' ONNX export folder."""

from __future__ import annotations

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.embedders.sqlite_embedding_cache import SqliteEmbeddingCache
from agrag.pipelines.config_models import EmbedderConfig
from agrag.pipelines.settings import AgragSettings


def embedder_for(
    config: EmbedderConfig,
    settings: AgragSettings,
    *,
    progress_bar: bool = False,
    cache: SqliteEmbeddingCache | None = None,
) -> SentenceTransformersTextEmbedder:
    """The embedder ``embedder`` configures (model, device, batch size, backend), not loaded yet."""
    return SentenceTransformersTextEmbedder(
        config.model,
        config.device,
        config.batch_size,
        progress_bar=progress_bar,
        cache=cache,
        backend=config.backend.value,
        onnx_dir=str(settings.onnx_dir) if settings.onnx_dir is not None else None,
    )
