"""``PassageGraph``: personalized PageRank over the bipartite graph of current chunks and the entities they name."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.graph.chunk_mass import ChunkMass

ABOUT_WEIGHT = 3.0  # a chunk is tied to the entity it is about (its title) three times as strongly as to a mention
_TOLERANCE = 1e-6


class PassageGraph:
    """An in-memory snapshot of the passage-entity graph, for personalized PageRank (HippoRAG's walk).

    Chunks and entities are nodes; a mention is an undirected edge of weight 1, an about link one of weight
    ``ABOUT_WEIGHT``. The walk restarts at the seed entities with probability ``1 - damping``; seeds are weighted by
    specificity (1 / the number of chunks that name the entity), so a rare name steers the walk more than a common one.

    Usage:
        ```python
        graph = PassageGraph(store.graph.passage_edges())
        scores = graph.personalized_pagerank(["e1f0..."], damping=0.5)  # chunk id -> mass
        ```
    """

    def __init__(self, edges: PassageEdges) -> None:
        self.edges = edges  # kept so a document scope's graph can be cut from it
        weights: dict[tuple[str, str], float] = {pair: 1.0 for pair in edges.mentions}
        weights.update({pair: ABOUT_WEIGHT for pair in edges.about})
        self.chunk_ids = sorted({c for c, _ in weights})
        self.entity_ids = sorted({e for _, e in weights})
        self._chunk_index = {c: i for i, c in enumerate(self.chunk_ids)}
        self._entity_index = {e: i for i, e in enumerate(self.entity_ids)}
        rows = [self._chunk_index[c] for c, _ in weights]
        cols = [self._entity_index[e] for _, e in weights]
        w = sp.csr_matrix(
            (list(weights.values()), (rows, cols)), shape=(len(self.chunk_ids), len(self.entity_ids)), dtype=np.float64
        )
        self._names: dict[str, list[str]] = {}
        for name, entity_id in edges.names:
            if entity_id in self._entity_index:
                self._names.setdefault(name, []).append(entity_id)
        self._specificity = 1.0 / np.maximum(np.asarray((w > 0).sum(axis=0)).ravel(), 1)
        adjacency = sp.bmat([[None, w], [w.T, None]], format="csr")
        degree = np.asarray(adjacency.sum(axis=0)).ravel()
        degree[degree == 0] = 1.0
        self._transition = (adjacency @ sp.diags(1.0 / degree)).tocsr()  # column-stochastic

    def __contains__(self, entity_id: object) -> bool:
        return entity_id in self._entity_index

    def entities_named(self, normalized_name: str) -> list[str]:
        """The graph's entities with this normalized name (several for homonyms with different labels)."""
        return self._names.get(normalized_name, [])

    def chunk_count(self, entity_id: str) -> int:
        """How many current chunks name or are about ``entity_id`` (0 if it is not in the graph)."""
        index = self._entity_index.get(entity_id)
        return 0 if index is None else round(1.0 / self._specificity[index])

    def personalized_pagerank(self, seeds: list[str], damping: float = 0.5, max_iterations: int = 50) -> ChunkMass:
        """PageRank mass on every chunk for a walk that restarts at ``seeds``; empty if no seed is in the graph.

        Iterates until the L1 change is below 1e-6 or ``max_iterations`` is reached.
        """
        n_chunks = len(self.chunk_ids)
        restart = np.zeros(n_chunks + len(self.entity_ids))
        for entity_id in seeds:
            index = self._entity_index.get(entity_id)
            if index is not None:
                restart[n_chunks + index] = self._specificity[index]
        if not restart.any():
            return ChunkMass(self.chunk_ids, self._chunk_index, np.zeros(n_chunks))
        restart /= restart.sum()
        rank = restart.copy()
        for _ in range(max_iterations):
            updated = (1.0 - damping) * restart + damping * (self._transition @ rank)
            converged = float(np.abs(updated - rank).sum()) < _TOLERANCE
            rank = updated
            if converged:
                break
        return ChunkMass(self.chunk_ids, self._chunk_index, rank[:n_chunks])
