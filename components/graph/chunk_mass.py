"""``ChunkMass``: the walk mass of every chunk, read by id or as the best few, without a dict of all of them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property

import numpy as np

_SAMPLE = 16_384  # about how many masses ``top`` samples to guess a threshold


class ChunkMass(Mapping[str, float]):
    """A read-only mapping chunk id -> mass over the chunks with mass (``PassageGraph.personalized_pagerank``).

    Why: at 100,000 chunks a walk puts mass on most of them, and a dict of all of them, then sorting it, cost more
    than the walk; a search reads the best few hundred and the mass of its other candidates.

    Args:
        chunk_ids: Every chunk of the graph, sorted (index order is id order).
        index: Position of each chunk id in ``chunk_ids``.
        mass: Mass per position, never negative (zero for chunks the walk did not reach).
    """

    def __init__(self, chunk_ids: Sequence[str], index: Mapping[str, int], mass: np.ndarray) -> None:
        self._ids, self._index, self._mass = chunk_ids, index, mass

    @cached_property
    def _nonzero(self) -> np.ndarray:
        # found on first use: a search reads masses by id and the best few, which need no list of all reached chunks
        return np.flatnonzero(self._mass)

    def __getitem__(self, chunk_id: str) -> float:
        position = self._index.get(chunk_id)
        if position is None or self._mass[position] == 0:
            raise KeyError(chunk_id)
        return float(self._mass[position])

    def __iter__(self) -> Iterator[str]:
        return (self._ids[int(i)] for i in self._nonzero)

    def __len__(self) -> int:
        return len(self._nonzero)

    def peak(self) -> float:
        """The largest mass (0.0 when no chunk has any)."""
        return float(self._mass.max()) if len(self._mass) else 0.0

    def top(self, k: int) -> list[str]:
        """The ``k`` chunks with the most mass, most first, ties by id (as sorting the whole mapping would give)."""
        if k <= 0:
            return []
        positions = self._heaviest(k)
        order = np.lexsort((positions, -self._mass[positions]))[:k]  # by mass descending, then position (= id order)
        return [self._ids[int(i)] for i in positions[order]]

    def _heaviest(self, k: int) -> np.ndarray:
        """Positions with at least the ``k``-th largest mass, boundary ties included (all with mass if fewer)."""
        # A threshold read from a sample of the masses usually keeps a few times k of them, and if it keeps at least
        # k, every chunk as heavy as the k-th heaviest is among them: then only those are partitioned, not every
        # chunk (with the list of reached chunks no longer needed, 1 ms instead of 14 at 1,000,000 chunks).
        stride = max(1, len(self._mass) // _SAMPLE)
        sample = self._mass[::stride]
        rank = 4 * k // stride + 8  # the sample's rank-th heaviest has about 4k chunks at least as heavy
        if rank < len(sample):
            guess = np.partition(sample, len(sample) - rank)[len(sample) - rank]
            if guess > 0 and len(kept := np.flatnonzero(self._mass >= guess)) >= k:
                return self._at_least_kth(kept, k)
        return self._at_least_kth(self._nonzero, k)

    def _at_least_kth(self, positions: np.ndarray, k: int) -> np.ndarray:
        values = self._mass[positions]
        if len(values) <= k:
            return positions
        kth = np.partition(values, len(values) - k)[len(values) - k]
        kept: np.ndarray = positions[values >= kth]
        return kept
