"""Converters from the public multi-hop QA sets in the bench folder to the generic evaluation format."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agrag.components.errors import EvaluationError
from agrag.service.evaluation.dataset import EvalDataset, EvalPassage, EvalQuestion, load_generic, read_json

_HOPS = re.compile(r"^(\d+hop)")


def _locate(paragraph: dict[str, Any], index: dict[tuple[str, str], int], question_id: str) -> int:
    key = (paragraph["title"], paragraph["paragraph_text"])
    if key not in index:
        raise EvaluationError(f"MuSiQue question {question_id}: a paragraph is missing from the corpus file.")
    return index[key]


def _musique(folder: Path) -> EvalDataset:
    """MuSiQue: gold = supporting paragraphs, identified by (title, text); type = hop count."""
    corpus = tuple(
        EvalPassage(p["title"], p["text"]) for p in read_json(folder / "musique_train_corpus.json", "corpus")
    )
    index = {(p.title, p.text): i for i, p in reversed(list(enumerate(corpus)))}
    questions = []
    for raw in read_json(folder / "musique_train.json", "questions"):
        paragraphs = raw["paragraphs"]
        gold = tuple(dict.fromkeys(_locate(p, index, raw["id"]) for p in paragraphs if p["is_supporting"]))
        last_step = raw["question_decomposition"][-1]["paragraph_support_idx"]
        answer = next(p for p in paragraphs if p["idx"] == last_step)
        hops = _HOPS.match(raw["id"])
        kind = hops.group(1) if hops else ""
        located = _locate(answer, index, raw["id"])
        questions.append(EvalQuestion(raw["question"], gold, kind, located, _answer(raw)))
    triples = sorted(folder.glob("openie_*.json"))
    return EvalDataset("musique_dev", corpus, tuple(questions), triples[0] if triples else None)


def _hotpotqa(folder: Path) -> EvalDataset:
    """HotpotQA: gold = unique titles of ``supporting_facts``; text = joined sentences; type = bridge/comparison."""
    raw_corpus = read_json(folder / "hotpotqa_train_corpus.json", "corpus")
    corpus = tuple(EvalPassage(title, "".join(sentences)) for title, sentences in raw_corpus.items())
    index = {p.title: i for i, p in enumerate(corpus)}
    questions = []
    for raw in read_json(folder / "hotpotqa_train.json", "questions"):
        titles = list(dict.fromkeys(title for title, _ in raw["supporting_facts"]))
        missing = [t for t in titles if t not in index]
        if missing:
            raise EvaluationError(f"HotpotQA question {raw['_id']}: gold titles {missing} are not in the corpus file.")
        gold_titles = tuple(index[t] for t in titles)
        questions.append(EvalQuestion(raw["question"], gold_titles, raw.get("type", ""), None, _answer(raw)))
    return EvalDataset("hotpotqa_dev", corpus, tuple(questions))


def _notes(folder: Path) -> EvalDataset:
    """notes_dev: already in the generic format (``corpus.json``, ``questions.json``); type = single/bridge2/..."""
    return load_generic(folder / "corpus.json", folder / "questions.json", "notes_dev")


def _answer(raw: dict[str, Any]) -> str | None:
    """The gold answer of a MuSiQue or HotpotQA question, when the file has one."""
    answer = raw.get("answer")
    return answer if isinstance(answer, str) and answer.strip() else None


CONVERTERS: dict[str, Callable[[Path], EvalDataset]] = {
    "musique_dev": _musique,
    "hotpotqa_dev": _hotpotqa,
    "notes_dev": _notes,
}


def load_named(name: str, bench_dir: Path) -> EvalDataset:
    """Load a named set from ``bench_dir/<name>/``; an unknown name or a missing folder says what to do."""
    if name not in CONVERTERS:
        raise EvaluationError(
            f"Unknown dataset {name!r}. Named sets: {', '.join(CONVERTERS)}; for your own data use "
            "`agrag eval --corpus corpus.json --questions questions.json`."
        )
    folder = bench_dir / name
    if not folder.is_dir():
        raise EvaluationError(
            f"The benchmark folder {folder} does not exist. Set AGRAG_EVAL_BENCH_DIR to the folder that holds {name}/."
        )
    try:
        return CONVERTERS[name](folder)
    except (KeyError, TypeError, StopIteration, AttributeError) as exc:
        raise EvaluationError(f"{folder} does not have the layout of {name}: {exc!r}.") from exc
