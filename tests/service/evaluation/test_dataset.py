import json
from pathlib import Path

import pytest

from agrag.components.errors import EvaluationError
from agrag.service.evaluation.dataset import EvalPassage, load_generic, write_generic


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


CORPUS = [{"title": "Ada", "text": "Ada wrote notes."}, {"title": "Bob", "text": "Bob met Ada."}]


def test_generic_format_round_trips(tmp_path: Path) -> None:
    corpus = write(tmp_path / "c.json", CORPUS)
    questions = write(
        tmp_path / "q.json",
        [
            {"question": "Who met Ada?", "gold": [1, 0, 1], "type": "bridge", "answer_passage": 1, "answer": "Bob"},
            {"question": "Ada?", "gold": [0]},
        ],
    )
    dataset = load_generic(corpus, questions, name="mine")
    assert dataset.corpus[0] == EvalPassage("Ada", "Ada wrote notes.")
    assert dataset.corpus[0].document_text == "Ada\nAda wrote notes."
    assert dataset.questions[0].gold == (1, 0)  # duplicates collapse, order kept
    assert (dataset.questions[0].type, dataset.questions[0].answer_passage) == ("bridge", 1)
    assert (dataset.questions[0].answer, dataset.questions[1].answer) == ("Bob", None)
    assert dataset.head(1).questions == dataset.questions[:1]
    again = load_generic(*write_generic(dataset, tmp_path / "out"), name="mine")
    assert again == dataset
    assert again.corpus_hash == dataset.corpus_hash


@pytest.mark.parametrize(
    ("questions", "message"),
    [
        ([{"question": "x", "gold": [5]}], "corpus index 5 is outside the corpus (0 to 1)"),
        ([{"question": "x", "gold": []}], '"gold" must be a non-empty list'),
        ([{"question": "", "gold": [0]}], 'non-empty string "question"'),
        ([{"question": "x", "gold": [0], "golds": [1]}], "unknown keys ['golds']"),
        ([{"question": "x", "gold": [0], "answer_passage": 9}], "corpus index 9"),
        ([{"question": "x", "gold": [0], "answer": 5}], '"answer" must be a string'),
        ({"question": "x"}, "non-empty JSON list"),
    ],
)
def test_malformed_questions_name_the_problem(tmp_path: Path, questions: object, message: str) -> None:
    corpus = write(tmp_path / "c.json", CORPUS)
    with pytest.raises(EvaluationError) as caught:
        load_generic(corpus, write(tmp_path / "q.json", questions))
    assert message in str(caught.value)


def test_unreadable_corpus_is_an_evaluation_error(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text("[{", encoding="utf-8")
    with pytest.raises(EvaluationError, match="is not valid JSON"):
        load_generic(tmp_path / "c.json", write(tmp_path / "q.json", []))
    with pytest.raises(EvaluationError, match="Cannot read the corpus file"):
        load_generic(tmp_path / "missing.json", tmp_path / "q.json")
    with pytest.raises(EvaluationError, match='item 1 must be an object with string "title" and "text"'):
        load_generic(write(tmp_path / "c2.json", [CORPUS[0], {"title": 3}]), write(tmp_path / "q.json", [{}]))
