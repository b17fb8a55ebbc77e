"""``ChunkMass`` reads like the dict of every chunk's mass it replaces, and its best few are that dict's, sorted."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agrag.components.graph.chunk_mass import ChunkMass


@settings(max_examples=200, deadline=None, database=None)
@given(
    masses=st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.25, 0.5, 1e-9]), min_size=0, max_size=40),
    k=st.integers(0, 45),
)
def test_it_equals_the_dict_of_nonzero_masses_and_its_top_is_that_dict_sorted(masses: list[float], k: int) -> None:
    ids = [f"c{n:02d}" for n in range(len(masses))]
    mass = ChunkMass(ids, {c: i for i, c in enumerate(ids)}, np.array(masses, dtype=np.float64))
    expected = {c: m for c, m in zip(ids, masses, strict=True) if m}
    assert dict(mass) == expected and mass == expected and len(mass) == len(expected)
    assert mass.top(k) == sorted(expected, key=lambda c: (-expected[c], c))[:k]  # ties (the two 0.25) by id
    assert mass.peak() == max(expected.values(), default=0.0)
    assert mass.get("c-none") is None and (mass.get(ids[0]) if ids else None) == expected.get(ids[0] if ids else "")


def _sorted_top(masses: np.ndarray, k: int) -> list[int]:
    reached = np.flatnonzero(masses)
    return [int(i) for i in sorted(reached, key=lambda i: (-masses[i], i))[:k]]


@pytest.mark.parametrize("k", [1, 7, 300, 2_000, 60_000, 200_000])
@pytest.mark.parametrize("seed", range(3))
def test_the_top_of_many_masses_with_ties_equals_sorting_them_all(k: int, seed: int) -> None:
    # large enough that top() guesses a threshold from a sample; few distinct values, so ties cross every boundary
    rng = np.random.default_rng(seed)
    masses = rng.choice(np.array([0.0, 0.0, 1e-9, 1e-6, 1e-6, 2e-4, 0.5], dtype=np.float32), 100_003)
    ids = [f"c{n:06d}" for n in range(len(masses))]
    mass = ChunkMass(ids, {}, masses)
    assert mass.top(k) == [ids[i] for i in _sorted_top(masses, k)]


def test_a_sample_that_misses_the_heaviest_falls_back_to_every_mass() -> None:
    masses = np.zeros(100_000, dtype=np.float32)
    stride = len(masses) // 16_384
    masses[1::stride] = 0.5  # not sampled
    masses[: 250 * stride : stride] = 1.0  # sampled: the threshold they give keeps only these 250
    ids = [f"c{n:06d}" for n in range(len(masses))]
    mass = ChunkMass(ids, {}, masses)
    assert mass.top(300) == [ids[i] for i in _sorted_top(masses, 300)]
    assert ChunkMass(ids, {}, np.zeros(len(ids))).top(300) == []
    few = np.zeros(100_000)
    few[[5, 70_000, 99_999]] = [0.1, 0.3, 0.1]
    assert ChunkMass(ids, {}, few).top(300) == ["c070000", "c000005", "c099999"]
