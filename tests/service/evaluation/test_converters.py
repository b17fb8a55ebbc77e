import json
from pathlib import Path

import pytest

from agrag.components.errors import EvaluationError
from agrag.service.evaluation.converters import load_named

REAL_BENCH = Path(__file__).resolve().parents[3].parent / "shared" / "bench"


def paragraph(idx: int, title: str, text: str, supporting: bool) -> dict[str, object]:
    return {"idx": idx, "title": title, "paragraph_text": text, "is_supporting": supporting}


def test_musique_identifies_passages_by_title_and_text(tmp_path: Path) -> None:
    folder = tmp_path / "musique_dev"
    folder.mkdir()
    corpus = [{"title": "X", "text": "one"}, {"title": "X", "text": "two"}, {"title": "Y", "text": "three"}]
    (folder / "musique_train_corpus.json").write_text(json.dumps(corpus))
    question = {
        "id": "3hop1__1_2_3",
        "question": "q?",
        "paragraphs": [
            paragraph(0, "Y", "three", True),
            paragraph(1, "X", "two", True),
            paragraph(2, "X", "one", False),
        ],
        "question_decomposition": [{"paragraph_support_idx": 0}, {"paragraph_support_idx": 1}],
        "answer": "Lyon",
    }
    (folder / "musique_train.json").write_text(json.dumps([question]))
    dataset = load_named("musique_dev", tmp_path)
    assert dataset.questions[0].gold == (2, 1)
    assert dataset.questions[0].answer_passage == 1  # the last decomposition step's paragraph
    assert dataset.questions[0].type == "3hop"
    assert dataset.questions[0].answer == "Lyon"
    assert dataset.triples_path is None


def test_hotpotqa_gold_is_the_unique_supporting_titles(tmp_path: Path) -> None:
    folder = tmp_path / "hotpotqa_dev"
    folder.mkdir()
    (folder / "hotpotqa_train_corpus.json").write_text(json.dumps({"A": ["First.", " Second."], "B": ["Other."]}))
    question = {
        "_id": "1",
        "question": "q?",
        "type": "comparison",
        "supporting_facts": [["B", 0], ["A", 1], ["B", 2]],
        "answer": "yes",
    }
    (folder / "hotpotqa_train.json").write_text(json.dumps([question]))
    dataset = load_named("hotpotqa_dev", tmp_path)
    assert dataset.corpus[0].document_text == "A\nFirst. Second."
    assert dataset.questions[0].gold == (1, 0)
    assert dataset.questions[0].type == "comparison"
    assert dataset.questions[0].answer == "yes"


def test_unknown_or_missing_sets_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match=r"Unknown dataset 'squad'.*--corpus corpus\.json"):
        load_named("squad", tmp_path)
    with pytest.raises(EvaluationError, match="AGRAG_EVAL_BENCH_DIR"):
        load_named("musique_dev", tmp_path)


@pytest.mark.skipif(not REAL_BENCH.is_dir(), reason="the shared benchmark folder is not on this machine")
def test_the_real_dev_sets_convert_as_their_readmes_describe() -> None:
    musique = load_named("musique_dev", REAL_BENCH)
    assert (len(musique.questions), len(musique.corpus)) == (100, 1890)
    assert sum(len(q.gold) for q in musique.questions) == 237
    assert musique.triples_path is not None
    hotpotqa = load_named("hotpotqa_dev", REAL_BENCH)
    assert (len(hotpotqa.questions), len(hotpotqa.corpus)) == (100, 994)
    assert all(len(q.gold) == 2 for q in hotpotqa.questions)
    assert all(q.answer for q in (*musique.questions, *hotpotqa.questions))  # gold answers, for the agent's eval
    notes = load_named("notes_dev", REAL_BENCH)
    assert (len(notes.questions), len(notes.corpus)) == (40, 45)
    assert {q.type for q in notes.questions} == {"single", "bridge2", "bridge3", "comparison"}
    assert all(len(q.gold) == 3 for q in notes.questions if q.type == "bridge3")


def test_notes_dev_reads_the_generic_format_and_names_a_bad_item(tmp_path: Path) -> None:
    folder = tmp_path / "notes_dev"
    folder.mkdir()
    (folder / "corpus.json").write_text(json.dumps([{"title": "Minutes", "text": "Ada chairs."}]))
    (folder / "questions.json").write_text(json.dumps([{"question": "Who chairs?", "gold": [0], "type": "single"}]))
    dataset = load_named("notes_dev", tmp_path)
    assert dataset.name == "notes_dev"
    assert dataset.corpus[0].document_text == "Minutes\nAda chairs."
    assert dataset.questions[0].type == "single"
    (folder / "questions.json").write_text(json.dumps([{"question": "Who?", "gold": [3]}]))
    with pytest.raises(EvaluationError, match="outside the corpus"):
        load_named("notes_dev", tmp_path)
