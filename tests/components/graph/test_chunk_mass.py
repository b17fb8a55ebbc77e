"""``ChunkMass`` reads like the dict of every chunk's mass it replaces, and its best few are that dict's, sorted."""

from __future__ import annotations

import numpy as np
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
