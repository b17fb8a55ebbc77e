"""Scores the agent's answers of an evaluation and writes them: a Markdown section, JSON, per-question lines.

* **EM** and **F1**: exact match and token F1 of the answer text against the gold answer (SQuAD normalization), over
  the questions that have one. An agent answers in sentences, so EM is strict; **contains** counts answers whose
  normalized text holds the whole normalized gold answer.
* **citations valid**: the share of drafted answers that cite at least one passage and whose every citation checked
  valid (fetched, in scope, well formed) after at most one repair.
* **cited recall**: the share of a question's gold passages among the passages its answer cites, averaged.
* **tool calls**, **tokens** and **seconds**: per question, averaged.

All shares are percentages over every question, except citations valid (over drafted answers).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from agrag.service.evaluation.answer_metrics import cited_recall, exact_match, normalize_answer, token_f1
from agrag.service.evaluation.answer_runner import AGENT, AnswerRecord
from agrag.service.evaluation.dataset import EvalQuestion


@dataclass(frozen=True, slots=True)
class AnswerScores:
    """The agent's scores over one evaluation's questions (see the module docstring)."""

    questions: int
    with_gold_answer: int
    drafted: int
    statuses: dict[str, int]
    exact_match: float
    f1: float
    contains: float
    citations_valid: float
    cited_recall: float
    tool_calls: float
    tokens: float
    seconds: float
    failed: int = 0
    failure: str = ""


@dataclass(frozen=True, slots=True)
class _Row:
    exact_match: float | None
    f1: float | None
    contains: float | None
    cited_recall: float


def _row(record: AnswerRecord, question: EvalQuestion) -> _Row:
    recall = cited_recall(record.cited, question.gold)
    if question.answer is None:
        return _Row(None, None, None, recall)
    gold = normalize_answer(question.answer)
    contains = float(bool(gold) and f" {gold} " in f" {normalize_answer(record.answer)} ")
    return _Row(exact_match(record.answer, question.answer), token_f1(record.answer, question.answer), contains, recall)


def _percent(values: Sequence[float]) -> float:
    return 100.0 * sum(values) / len(values) if values else 0.0


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def score_answers(records: Sequence[AnswerRecord], questions: Sequence[EvalQuestion]) -> AnswerScores:
    """Score each record against its question (the two lists are in the same order)."""
    rows = [_row(r, q) for r, q in zip(records, questions, strict=True)]
    gold = [row for row in rows if row.exact_match is not None]
    drafted = [r for r in records if r.drafted]
    failed = [r for r in records if r.error]
    return AnswerScores(
        questions=len(records),
        with_gold_answer=len(gold),
        drafted=len(drafted),
        statuses=dict(Counter(r.status for r in records)),
        exact_match=_percent([row.exact_match for row in gold if row.exact_match is not None]),
        f1=_percent([row.f1 for row in gold if row.f1 is not None]),
        contains=_percent([row.contains for row in gold if row.contains is not None]),
        citations_valid=_percent([float(r.citations_valid) for r in drafted]),
        cited_recall=_percent([row.cited_recall for row in rows]),
        tool_calls=_mean([r.tool_calls for r in records]),
        tokens=_mean([r.tokens for r in records]),
        seconds=_mean([r.seconds for r in records]),
        failed=len(failed),
        failure=failed[0].error if failed else "",
    )


def answers_markdown(scores: AnswerScores) -> str:
    """The report's section on the agent's answers."""
    statuses = ", ".join(f"{status} {count}" for status, count in sorted(scores.statuses.items()))
    lines = [
        f"Agent answers ({scores.questions} questions, {scores.with_gold_answer} with a gold answer; {statuses}):",
        "",
        "| EM | F1 | contains | citations valid | cited recall | tool calls / q | tokens / q | s / q |",
        "|---|---|---|---|---|---|---|---|",
        f"| {scores.exact_match:.1f} | {scores.f1:.1f} | {scores.contains:.1f} | {scores.citations_valid:.1f} "
        f"(n={scores.drafted}) | {scores.cited_recall:.1f} | {scores.tool_calls:.1f} | {scores.tokens:.0f} "
        f"| {scores.seconds:.1f} |",
    ]
    if scores.failed:
        lines += ["", f"The LLM failed in {scores.failed} of {scores.questions} runs; first: {scores.failure}"]
    return "\n".join(lines) + "\n"


def answers_json(scores: AnswerScores) -> dict[str, object]:
    """The JSON summary's ``answers`` entry: every score, rounded."""
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in asdict(scores).items()}


def answer_lines(records: Sequence[AnswerRecord], questions: Sequence[EvalQuestion]) -> list[str]:
    """One JSON line per question: the agent's answer, how its run ended, what it cited, and its scores."""
    lines = []
    for i, (record, question) in enumerate(zip(records, questions, strict=True)):
        row = _row(record, question)
        line = {
            "system": AGENT,
            "question_index": i,
            "question": question.question,
            "gold": list(question.gold),
            "gold_answer": question.answer,
            **asdict(record),
            "cited": list(record.cited),
            "exact_match": row.exact_match,
            "f1": row.f1,
            "contains": row.contains,
            "cited_recall": row.cited_recall,
        }
        lines.append(json.dumps(line, ensure_ascii=False))
    return lines
