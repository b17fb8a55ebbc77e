"""``HashedTextEncoder``: unit vectors hashed from a text's words, for benchmarks that measure agrag, not a model.

Each word gets a fixed pseudo-random Gaussian vector seeded by its hash; a text's vector is the normalized sum of its
words' vectors. So the same text always gets the same vector on any machine, texts sharing words are close (the
dense index has the neighbourhood structure of real embeddings, not uniform noise), and encoding costs microseconds.
The vectors carry no meaning beyond shared words: search quality with them says nothing about agrag's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from agrag.components.errors import EmbeddingError

MODEL_PREFIX = "hashed-"
_WORD = re.compile(r"\w+")
_WORDS_KEPT = 200_000  # word vectors kept in memory (about 300 MB at 384 dimensions); beyond, the cache restarts


def hashed_dimension(model: str) -> int:
    """The dimension a hashed model name asks for: ``hashed-384`` gives 384.

    Raises:
        EmbeddingError: the name is not ``hashed-<dimension>`` with a dimension from 2 to 4096.
    """
    suffix = model.removeprefix(MODEL_PREFIX)
    if not model.startswith(MODEL_PREFIX) or not suffix.isdigit() or not 2 <= int(suffix) <= 4096:
        raise EmbeddingError(
            f"embedder.backend=hashed needs embedder.model=hashed-<dimension> (2 to 4096), got {model!r}. "
            "Use embedder=hashed (hashed-384)."
        )
    return int(suffix)


def _word_vector(word: str, dimension: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(dimension).astype(np.float32)


class HashedTextEncoder:
    """Encodes texts like ``SentenceTransformer.encode`` does (normalized rows), from hashed word vectors.

    Usage:
        ```python
        encoder = HashedTextEncoder(384)
        vectors = encoder.encode(["Maria Chen wrote the Orion Planner"], batch_size=64)
        ```
    """

    def __init__(self, dimension: int) -> None:
        """Vectors of ``dimension`` floats."""
        self._dimension = dimension
        self._words: dict[str, np.ndarray] = {}
        self._empty = _word_vector("", dimension)  # a text without words still gets a unit vector

    def get_embedding_dimension(self) -> int:
        """Length of the vectors."""
        return self._dimension

    def encode(self, texts: Sequence[str], batch_size: int, **_options: object) -> np.ndarray:
        """One L2-normalized row per text, in order (``batch_size`` is accepted for the shared interface)."""
        out = np.empty((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            out[row] = np.sum([self._vector(w) for w in words], axis=0) if words else self._empty
        norms = np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        vectors: np.ndarray = out / norms
        return vectors

    def _vector(self, word: str) -> np.ndarray:
        vector = self._words.get(word)
        if vector is None:
            if len(self._words) >= _WORDS_KEPT:
                self._words.clear()
            vector = self._words[word] = _word_vector(word, self._dimension)
        return vector
