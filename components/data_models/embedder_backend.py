"""``EmbedderBackend``: what runs the embedding model."""

from __future__ import annotations

from agrag.components.data_models.closed_set import ClosedSet


class EmbedderBackend(ClosedSet):
    """torch (sentence-transformers, any device) or onnx (ONNX Runtime on the CPU, several times faster there)."""

    TORCH = "torch"
    ONNX = "onnx"
