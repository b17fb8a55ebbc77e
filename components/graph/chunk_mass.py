"""``ChunkMass``: the walk mass of every chunk, read by id or as the best few, without a dict of all of them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np


class ChunkMass(Mapping[str, float]):
    """A read-only mapping chunk id -> mass over the chunks with mass (``PassageGraph.personalized_pagerank``).

    Why: at 100,000 chunks a walk puts mass on most of them, and a dict of all of them, then sorting it, cost more
    than the walk; a search reads the best few hundred and the mass of its other candidates.

    Args:
        chunk_ids: Every chunk of the graph, sorted (index order is id order).
        index: Position of each chunk id in ``chunk_ids``.
        mass: Mass per position (zero for chunks the walk did not reach).
    """

    def __init__(self, chunk_ids: Sequence[str], index: Mapping[str, int], mass: np.ndarray) -> None:
        self._ids, self._index, self._mass = chunk_ids, index, mass
        self._nonzero = np.flatnonzero(mass)

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
        return float(self._mass[self._nonzero].max()) if len(self._nonzero) else 0.0

    def top(self, k: int) -> list[str]:
        """The ``k`` chunks with the most mass, most first, ties by id (as sorting the whole mapping would give)."""
        values = self._mass[self._nonzero]
        if k <= 0 or not len(values):
            return []
        if len(values) > k:  # everything at least as heavy as the k-th heaviest, ties at the boundary included
            kth = np.partition(values, len(values) - k)[len(values) - k]
            keep = values >= kth
            positions, values = self._nonzero[keep], values[keep]
        else:
            positions = self._nonzero
        order = np.lexsort((positions, -values))[:k]  # by mass descending, then position (= id order)
        return [self._ids[int(i)] for i in positions[order]]
