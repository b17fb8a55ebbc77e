"""A fact's vector, made from its passage's and its ends' vectors: pinned, since every stored fact vector follows it."""

from __future__ import annotations

import math

import pytest

from agrag.components.embedders.fact_vectors import fact_vector


def _close(a: object, b: list[float]) -> bool:
    return all(math.isclose(x, y, abs_tol=1e-6) for x, y in zip(a, b, strict=True))  # type: ignore[call-overload]


def test_the_passage_and_the_ends_weigh_alike_and_the_result_is_a_unit_vector() -> None:
    vector = fact_vector([2.0, 0.0, 0.0], [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert vector is not None
    half = 1 / math.sqrt(2)
    # unit passage (1, 0, 0) plus unit sum of the ends (0, .71, .71), made unit again
    expected = [1.0, half, half]
    norm = math.sqrt(sum(x * x for x in expected))
    assert _close(vector, [x / norm for x in expected])
    assert math.isclose(sum(x * x for x in vector), 1.0, rel_tol=1e-6)


def test_the_facts_of_one_passage_differ_by_their_ends() -> None:
    passage = [1.0, 0.0, 0.0]
    first, second = fact_vector(passage, [[0.0, 1.0, 0.0]]), fact_vector(passage, [[0.0, 0.0, 1.0]])
    assert first is not None and second is not None and list(first) != list(second)


@pytest.mark.parametrize(
    ("passage", "ends", "expected"),
    [
        ([3.0, 4.0], [], [0.6, 0.8]),
        (None, [[3.0, 0.0], [0.0, 4.0]], [0.6, 0.8]),
        ([0.0, 0.0], [[0.0, 2.0]], [0.0, 1.0]),
    ],
)
def test_a_missing_or_zero_part_leaves_the_other(
    passage: list[float] | None, ends: list[list[float]], expected: list[float]
) -> None:
    assert _close(fact_vector(passage, ends), expected)


def test_nothing_to_make_it_from_gives_none() -> None:
    assert fact_vector(None, []) is None
    assert fact_vector([0.0, 0.0], [[0.0, 0.0]]) is None
