"""Retrieval metrics over ranked passage lists: Recall@k, AllGold@k, answer-passage@k, and a paired bootstrap."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from agrag.service.evaluation.dataset import EvalQuestion

HEADLINE_K = 5


def recall_at(ranked: Sequence[int], gold: Sequence[int], k: int) -> float:
    """|gold in the top k| / |gold|."""
    top = set(ranked[:k])
    return sum(1 for g in gold if g in top) / len(gold)


def question_scores(ranked: Sequence[int], question: EvalQuestion, ks: Sequence[int]) -> dict[str, float]:
    """Every metric of one question: ``recall@k`` for each k, ``all_gold@5``, and ``answer@5`` when known."""
    scores = {f"recall@{k}": recall_at(ranked, question.gold, k) for k in ks}
    scores[f"all_gold@{HEADLINE_K}"] = float(recall_at(ranked, question.gold, HEADLINE_K) == 1.0)
    if question.answer_passage is not None:
        scores[f"answer@{HEADLINE_K}"] = float(question.answer_passage in ranked[:HEADLINE_K])
    return scores


def average(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over the questions that have it, in percent."""
    keys = list(dict.fromkeys(key for row in rows for key in row))  # answer@5 only where the answer passage is known
    return {key: 100.0 * fmean(row[key] for row in rows if key in row) for key in keys}


def by_type(rows: Sequence[Mapping[str, float]], questions: Sequence[EvalQuestion]) -> dict[str, dict[str, float]]:
    """``average`` per question type (hop count or bridge/comparison), with the number of questions as ``n``."""
    groups: dict[str, list[Mapping[str, float]]] = {}
    for row, question in zip(rows, questions, strict=True):
        groups.setdefault(question.type or "untyped", []).append(row)
    return {kind: {**average(members), "n": float(len(members))} for kind, members in sorted(groups.items())}


@dataclass(frozen=True, slots=True)
class PairedBootstrap:
    """A system's metric minus a reference's on resampled question sets.

    Attributes:
        difference: Observed mean difference, in points.
        low: 2.5th percentile of the resampled differences.
        high: 97.5th percentile.
        p_not_better: Share of resamples where the system is not ahead (one-sided p-value).
    """

    difference: float
    low: float
    high: float
    p_not_better: float


def paired_bootstrap(system: Sequence[float], reference: Sequence[float], samples: int, seed: int) -> PairedBootstrap:
    """Resample questions with replacement ``samples`` times; both systems are scored on the same draw."""
    deltas = [a - b for a, b in zip(system, reference, strict=True)]
    n = len(deltas)
    rng = random.Random(seed)
    means = sorted(100.0 * sum(deltas[rng.randrange(n)] for _ in range(n)) / n for _ in range(samples))
    return PairedBootstrap(
        difference=100.0 * fmean(deltas),
        low=means[int(0.025 * (samples - 1))],
        high=means[int(0.975 * (samples - 1))],
        p_not_better=sum(1 for m in means if m <= 0) / samples,
    )
