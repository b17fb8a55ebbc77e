"""Scores of an agent's answer against a gold answer: exact match and token F1, as MuSiQue and HotpotQA score them.

Both compare normalized text: lower case, punctuation and the articles a/an/the removed, whitespace collapsed (the
SQuAD normalization the two benchmarks use). The agent's answer is scored without its references and Sources list.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Collection, Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_REFERENCES = re.compile(r"\s*\[\d+\]")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
SOURCES_HEADING = "\nSources:"


def answer_text(rendered: str) -> str:
    """A rendered answer without its numbered references and its Sources list."""
    return _REFERENCES.sub("", rendered.split(SOURCES_HEADING, 1)[0]).strip()


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def exact_match(prediction: str, gold: str) -> float:
    """1.0 when the normalized texts are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    """The F1 of the normalized tokens the prediction shares with the gold answer (0.0 when none)."""
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def cited_recall(cited_passages: Sequence[int], gold: Collection[int]) -> float:
    """The share of the gold passages among the passages an answer cites."""
    return len(set(cited_passages) & set(gold)) / len(gold) if gold else 0.0
