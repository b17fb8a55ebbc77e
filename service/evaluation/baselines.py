"""The reference retrievers every recipe is compared with: BM25 (bm25s), dense cosine, and their RRF."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import EvaluationError
from agrag.service.evaluation.dataset import EvalPassage

BASELINE_RRF_K = 60  # the k of the published baselines, independent of RETRIEVAL_RRF_K
FUSION_DEPTH = 100  # each list fused to this depth


def _bm25s() -> object:
    try:
        import bm25s  # noqa: PLC0415 - an optional dependency (the eval extra)
    except ImportError as exc:
        raise EvaluationError(
            "`agrag eval` needs the eval extra: pip install 'agrag[eval]' (bm25s and matplotlib)."
        ) from exc
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("bm25s"):
            logging.getLogger(name).setLevel(logging.WARNING)  # it logs every index build at DEBUG
    return bm25s


class Bm25Baseline:
    """bm25s with its defaults and English stopwords over each passage's title and text.

    Passages that match no query term are left out of the ranking.
    """

    def __init__(self, passages: Sequence[EvalPassage]) -> None:
        self._bm25s = _bm25s()
        corpus = [p.document_text for p in passages]
        self._retriever = self._bm25s.BM25()  # type: ignore[attr-defined]
        self._retriever.index(self._bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)  # type: ignore[attr-defined]
        self._size = len(corpus)

    def rank(self, queries: Sequence[str], depth: int) -> list[list[int]]:
        """The best ``depth`` passage indexes per query."""
        tokens = self._bm25s.tokenize(list(queries), stopwords="en", show_progress=False)  # type: ignore[attr-defined]
        ids, scores = self._retriever.retrieve(tokens, k=min(depth, self._size), show_progress=False)
        return [
            [int(i) for i, s in zip(row, row_scores, strict=True) if s > 0]
            for row, row_scores in zip(ids, scores, strict=True)
        ]


class DenseBaseline:
    """Cosine similarity of normalized embeddings of each passage's title and text (cached, so reruns are cheap)."""

    def __init__(self, passages: Sequence[EvalPassage], embedder: SentenceTransformersTextEmbedder) -> None:
        self._embedder = embedder
        self._matrix = np.asarray(embedder.embed_batch([p.document_text for p in passages]), dtype=np.float32)

    def rank(self, queries: Sequence[str], depth: int) -> list[list[int]]:
        """The best ``depth`` passage indexes per query; equal scores go to the lower index."""
        query_matrix = np.asarray(self._embedder.embed_batch(list(queries), progress_bar=False), dtype=np.float32)
        scores = query_matrix @ self._matrix.T
        return [[int(i) for i in np.lexsort((np.arange(row.size), -row))[:depth]] for row in scores]


def rrf(lists: Sequence[Sequence[int]], k: int = BASELINE_RRF_K) -> list[int]:
    """Reciprocal Rank Fusion of ranked lists (rank 1 is best); ties go to the lower index."""
    scores: dict[int, float] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked[:FUSION_DEPTH], start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda item: (-scores[item], item))
