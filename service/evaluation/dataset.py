"""The generic evaluation format: a corpus of passages and questions that name their gold passages.

``corpus.json`` is a JSON list of ``{"title": str, "text": str}``; a passage's id is its index in that list.
``questions.json`` is a JSON list of ``{"question": str, "gold": [int, ...], "type": str (optional),
"answer_passage": int (optional), "answer": str (optional)}``, where ``gold`` and ``answer_passage`` are corpus indexes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agrag.components.errors import EvaluationError


@dataclass(frozen=True, slots=True)
class EvalPassage:
    """One corpus passage; ingested as one document: the title, a line break, then the text."""

    title: str
    text: str

    @property
    def document_text(self) -> str:
        """The text indexed for this passage (the protocol of the HippoRAG papers)."""
        return f"{self.title}\n{self.text}"


@dataclass(frozen=True, slots=True)
class EvalQuestion:
    """A question, the corpus indexes of its gold passages, and optional type, answer passage and gold answer."""

    question: str
    gold: tuple[int, ...]
    type: str = ""
    answer_passage: int | None = None
    answer: str | None = None  # the gold answer text, for scoring an agent's answers (exact match, F1)


@dataclass(frozen=True, slots=True)
class EvalDataset:
    """A named corpus and its questions."""

    name: str
    corpus: tuple[EvalPassage, ...]
    questions: tuple[EvalQuestion, ...]
    triples_path: Path | None = None

    @property
    def corpus_hash(self) -> str:
        """SHA-256 of the corpus in its generic JSON form: the key of every cache built from it."""
        blob = json.dumps([[p.title, p.text] for p in self.corpus], ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()

    def head(self, count: int | None) -> EvalDataset:
        """The same corpus with only the first ``count`` questions (all when None)."""
        if count is None:
            return self
        return EvalDataset(self.name, self.corpus, self.questions[:count], self.triples_path)


def read_json(path: Path, what: str) -> Any:
    """Parse a JSON file; an unreadable or invalid file raises ``EvaluationError`` naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvaluationError(f"Cannot read the {what} file {path}: {exc.strerror or exc}.") from exc
    except ValueError as exc:
        raise EvaluationError(f"The {what} file {path} is not valid JSON: {exc}.") from exc


def _passage(item: Any, index: int, path: Path) -> EvalPassage:
    if not isinstance(item, dict) or not isinstance(item.get("title"), str) or not isinstance(item.get("text"), str):
        raise EvaluationError(
            f'{path}: item {index} must be an object with string "title" and "text", got {str(item)[:80]!r}.'
        )
    return EvalPassage(item["title"], item["text"])


def _question(item: Any, index: int, path: Path, corpus_size: int) -> EvalQuestion:
    where = f"{path}: question {index}"
    if not isinstance(item, dict) or not isinstance(item.get("question"), str) or not item["question"].strip():
        raise EvaluationError(f'{where} must be an object with a non-empty string "question".')
    gold = item.get("gold")
    if not isinstance(gold, list) or not gold or not all(isinstance(g, int) and not isinstance(g, bool) for g in gold):
        raise EvaluationError(f'{where}: "gold" must be a non-empty list of corpus indexes, got {gold!r}.')
    answer = item.get("answer_passage")
    for value in [*gold, *([answer] if answer is not None else [])]:
        if not isinstance(value, int) or not 0 <= value < corpus_size:
            raise EvaluationError(f"{where}: corpus index {value!r} is outside the corpus (0 to {corpus_size - 1}).")
    unknown = set(item) - {"question", "gold", "type", "answer_passage", "answer"}
    if unknown:
        raise EvaluationError(
            f"{where}: unknown keys {sorted(unknown)}; valid keys: question, gold, type, answer_passage, answer."
        )
    text = item.get("answer")
    if text is not None and not isinstance(text, str):
        raise EvaluationError(f'{where}: "answer" must be a string (the gold answer), got {text!r}.')
    return EvalQuestion(item["question"], tuple(dict.fromkeys(gold)), str(item.get("type", "")), answer, text)


def load_generic(corpus_path: Path, questions_path: Path, name: str | None = None) -> EvalDataset:
    """Read a dataset in the generic format; any problem raises ``EvaluationError`` naming the item."""
    raw_corpus = read_json(corpus_path, "corpus")
    raw_questions = read_json(questions_path, "questions")
    if not isinstance(raw_corpus, list) or not raw_corpus:
        raise EvaluationError(f'{corpus_path} must hold a non-empty JSON list of {{"title", "text"}} objects.')
    if not isinstance(raw_questions, list) or not raw_questions:
        raise EvaluationError(f'{questions_path} must hold a non-empty JSON list of {{"question", "gold"}} objects.')
    corpus = tuple(_passage(item, i, corpus_path) for i, item in enumerate(raw_corpus))
    questions = tuple(_question(item, i, questions_path, len(corpus)) for i, item in enumerate(raw_questions))
    return EvalDataset(name or corpus_path.stem, corpus, questions)


def write_generic(dataset: EvalDataset, folder: Path) -> tuple[Path, Path]:
    """Write a dataset as ``corpus.json`` and ``questions.json`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus_path, questions_path = folder / "corpus.json", folder / "questions.json"
    corpus = [{"title": p.title, "text": p.text} for p in dataset.corpus]
    questions = [
        {
            "question": q.question,
            "gold": list(q.gold),
            **({"type": q.type} if q.type else {}),
            **({"answer_passage": q.answer_passage} if q.answer_passage is not None else {}),
            **({"answer": q.answer} if q.answer is not None else {}),
        }
        for q in dataset.questions
    ]
    corpus_path.write_text(json.dumps(corpus, ensure_ascii=False, indent=1), encoding="utf-8")
    questions_path.write_text(json.dumps(questions, ensure_ascii=False, indent=1), encoding="utf-8")
    return corpus_path, questions_path
