import pytest

from agrag.service.evaluation.answer_metrics import (
    answer_text,
    cited_recall,
    exact_match,
    normalize_answer,
    token_f1,
)


def test_answers_are_compared_as_squad_normalizes_them() -> None:
    assert normalize_answer("The  Orion-Planner, of Acme!") == "orionplanner of acme"
    assert exact_match("the Lyon warehouse.", "Lyon Warehouse") == 1.0
    assert exact_match("Lyon", "Rotterdam") == 0.0


def test_token_f1_rewards_overlap_and_nothing_else() -> None:
    assert token_f1("Maria Chen", "Maria Chen") == 1.0
    assert token_f1("Maria", "Maria Chen") == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    assert token_f1("Tomas", "Maria Chen") == 0.0
    assert token_f1("", "Maria Chen") == 0.0


def test_a_rendered_answer_is_scored_without_references_or_sources() -> None:
    rendered = "Maria Chen [1] wrote it [2].\n\nSources:\n[1] Orion Planner Design Notes (version abc)"
    assert answer_text(rendered) == "Maria Chen wrote it."
    assert exact_match(answer_text("Maria Chen [1].\n\nSources:\n[1] x"), "Maria Chen") == 1.0


def test_cited_recall_is_the_share_of_gold_passages_cited() -> None:
    assert cited_recall([3, 7, 9], {3, 4}) == 0.5
    assert cited_recall([], {3}) == 0.0
    assert cited_recall([1], set()) == 0.0
