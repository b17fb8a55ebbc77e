"""Property tests of Reciprocal Rank Fusion on generated ranked lists (duplicates, shared items, several methods)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.search_result import SearchResult
from agrag.components.joiners.rrf_joiner import reciprocal_rank_fusion

ITEMS: list[Entity | Chunk] = [Entity(f"e{i}", f"E{i}", "Name") for i in range(8)] + [
    Chunk(f"c{i}", "d", "v", f"text {i}", ("T",), i, 0, 1) for i in range(8)
]
METHODS = ("entity", "chunk", "ppr", "community")


@st.composite
def ranked_lists(draw: st.DrawFn) -> list[list[SearchResult]]:
    lists = []
    for _ in range(draw(st.integers(1, 5))):
        method = draw(st.sampled_from(METHODS))
        picks = draw(st.lists(st.sampled_from(ITEMS), max_size=12))  # duplicates inside a list on purpose
        lists.append([SearchResult(item, 1.0, method, (method,)) for item in picks])
    return lists


def best_ranks(lists: list[list[SearchResult]]) -> dict[tuple[str, str], dict[str, int]]:
    """Each item's best rank per method, ranks counting distinct items of that method within one list."""
    ranks: dict[tuple[str, str], dict[str, int]] = {}
    for results in lists:
        seen: dict[str, list[tuple[str, str]]] = {}
        for result in results:
            order = seen.setdefault(result.method, [])
            if result.key in order:
                continue
            order.append(result.key)
            by_method = ranks.setdefault(result.key, {})
            by_method[result.method] = min(len(order), by_method.get(result.method, len(order)))
    return ranks


@settings(max_examples=200, deadline=None)
@given(lists=ranked_lists(), k=st.integers(1, 100))
def test_each_item_once_scored_by_its_best_rank_in_each_method(lists: list[list[SearchResult]], k: int) -> None:
    fused = reciprocal_rank_fusion(lists, k)
    expected = best_ranks(lists)
    assert [r.key for r in fused] == list(dict.fromkeys(r.key for r in fused)), "each item once"
    assert {r.key for r in fused} == set(expected)
    for result in fused:
        ranks = expected[result.key]
        assert result.score == pytest.approx(sum(1 / (k + r) for r in ranks.values()))
        assert set(result.methods) == set(ranks) and result.method == result.methods[0]
        assert ranks[result.method] == min(ranks.values()), "the method named is the one that ranked it best"
    assert [r.score for r in fused] == sorted((r.score for r in fused), reverse=True)


@settings(max_examples=100, deadline=None)
@given(lists=ranked_lists(), k=st.integers(1, 100), seed=st.integers(0, 2**16))
def test_the_order_of_the_lists_does_not_change_the_fusion(lists: list[list[SearchResult]], k: int, seed: int) -> None:
    shuffled = list(lists)
    random.Random(seed).shuffle(shuffled)
    before, after = reciprocal_rank_fusion(lists, k), reciprocal_rank_fusion(shuffled, k)
    assert [(r.key, r.score, r.methods) for r in before] == [(r.key, r.score, r.methods) for r in after]


@settings(max_examples=100, deadline=None)
@given(lists=ranked_lists(), extra=ranked_lists(), k=st.integers(1, 100))
def test_another_list_never_lowers_a_score(
    lists: list[list[SearchResult]], extra: list[list[SearchResult]], k: int
) -> None:
    before = {r.key: r.score for r in reciprocal_rank_fusion(lists, k)}
    after = {r.key: r.score for r in reciprocal_rank_fusion([*lists, *extra], k)}
    assert all(after[key] >= score - 1e-12 for key, score in before.items())
