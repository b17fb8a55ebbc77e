import pytest

from agrag.service.evaluation.dataset import EvalQuestion
from agrag.service.evaluation.metrics import average, by_type, paired_bootstrap, question_scores, recall_at


def test_recall_counts_gold_in_the_top_k() -> None:
    assert recall_at([4, 1, 9, 2], [1, 2], 2) == 0.5
    assert recall_at([4, 1, 9, 2], [1, 2], 4) == 1.0
    assert recall_at([], [1], 5) == 0.0


def test_question_scores_include_all_gold_and_answer_passage() -> None:
    question = EvalQuestion("q", (1, 2, 3), "3hop", answer_passage=3)
    scores = question_scores([3, 1, 7, 8, 9, 2], question, (2, 5))
    assert scores == {
        "recall@2": pytest.approx(2 / 3),
        "recall@5": pytest.approx(2 / 3),
        "all_gold@5": 0.0,
        "answer@5": 1.0,
    }
    assert "answer@5" not in question_scores([1], EvalQuestion("q", (1,)), (5,))


def test_average_and_breakdown_are_percentages_per_type() -> None:
    questions = [EvalQuestion("a", (1,), "bridge"), EvalQuestion("b", (1,), "bridge"), EvalQuestion("c", (1,), "")]
    rows = [{"recall@5": 1.0}, {"recall@5": 0.0}, {"recall@5": 1.0}]
    assert average(rows) == {"recall@5": pytest.approx(200 / 3)}
    assert by_type(rows, questions) == {
        "bridge": {"recall@5": 50.0, "n": 2.0},
        "untyped": {"recall@5": 100.0, "n": 1.0},
    }


def test_paired_bootstrap_separates_a_real_gain_from_no_gain() -> None:
    reference = [0.0, 1.0] * 50
    better = [1.0] * 100
    gain = paired_bootstrap(better, reference, samples=500, seed=1)
    assert gain.difference == pytest.approx(50.0)
    assert gain.low > 30.0
    assert gain.p_not_better == 0.0
    same = paired_bootstrap(reference, reference, samples=500, seed=1)
    assert (same.difference, same.low, same.high, same.p_not_better) == (0.0, 0.0, 0.0, 1.0)
