"""``EmbedderBackend``: what runs the embedding model."""

from __future__ import annotations

from agrag.components.data_models.closed_set import ClosedSet


class EmbedderBackend(ClosedSet, what="embedder backend"):
    """What computes the vectors.

    torch (any device: plain torch for mean-pooling BERT models, sentence-transformers for others); onnx (ONNX
    Runtime on the CPU, the same vectors faster); onnx_int8 (an int8-quantized ONNX export: faster again, vectors
    close to but not equal to torch's); hashed (no model: unit vectors hashed from the words, for benchmarks that
    measure the stores rather than the model).
    """

    TORCH = "torch"
    ONNX = "onnx"
    ONNX_INT8 = "onnx_int8"
    HASHED = "hashed"

    @property
    def cpu_only(self) -> bool:
        """Whether the backend runs on the CPU only (``embedder.device`` must be cpu)."""
        return self is not EmbedderBackend.TORCH

    @property
    def vector_variant(self) -> str:
        """A name for vectors that differ from the model's torch vectors ('' when they are the same to rounding).

        The embedding cache keeps such vectors apart, so a cached text never returns another backend's vector.
        """
        return "int8" if self is EmbedderBackend.ONNX_INT8 else ""
