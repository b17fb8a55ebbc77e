"""``PassageGraph``: personalized PageRank over the bipartite graph of current chunks and the entities they name."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import scipy.sparse as sp

from agrag.components.data_models.chunk import document_id_of
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
        weights: dict[tuple[str, str], float] = {pair: 1.0 for pair in edges.mentions}
        weights.update({pair: ABOUT_WEIGHT for pair in edges.about})
        chunk_ids = sorted({c for c, _ in weights})
        entity_ids = sorted({e for _, e in weights})
        chunk_index = {c: i for i, c in enumerate(chunk_ids)}
        entity_index = {e: i for i, e in enumerate(entity_ids)}
        w = sp.csr_matrix(
            (
                np.fromiter(weights.values(), np.float64, len(weights)),
                (
                    np.fromiter((chunk_index[c] for c, _ in weights), np.int64, len(weights)),
                    np.fromiter((entity_index[e] for _, e in weights), np.int64, len(weights)),
                ),
            ),
            shape=(len(chunk_ids), len(entity_ids)),
        )
        names: dict[str, list[str]] = {}
        for name, entity_id in edges.names:
            if entity_id in entity_index:
                names.setdefault(name, []).append(entity_id)
        self._build(chunk_index, entity_index, w, names)

    def _build(
        self, chunk_index: dict[str, int], entity_index: dict[str, int], w: sp.csr_matrix, names: dict[str, list[str]]
    ) -> None:
        """Keep the graph of ``w`` (chunk rows, entity columns, numbered in the order of the two indexes)."""
        # The weights are kept, not the edge list: a document scope's graph is cut from them (the edges as Python
        # tuples took 230 MB at 30,000 chunks, the matrix 5 MB).
        self.chunk_ids, self._chunk_index = list(chunk_index), chunk_index
        self.entity_ids, self._entity_index = list(entity_index), entity_index
        self._weights, self._names = w, names
        self._specificity = 1.0 / np.maximum(np.asarray((w > 0).sum(axis=0)).ravel(), 1)
        chunk_degree = np.asarray(w.sum(axis=1)).ravel()
        entity_degree = np.asarray(w.sum(axis=0)).ravel()
        chunk_degree[chunk_degree == 0] = 1.0
        entity_degree[entity_degree == 0] = 1.0
        # The two halves of the column-stochastic transition of the bipartite graph: entity mass to chunks, chunk mass
        # to entities. float32 halves them and makes each step of the walk about a quarter faster (the walk's top 30
        # chunks equal float64's on a 100,000-chunk Zipf graph; masses agree to about 1e-5 relative).
        self._to_chunks = (w @ sp.diags(1.0 / entity_degree)).tocsr().astype(np.float32)
        self._to_entities = (w.T @ sp.diags(1.0 / chunk_degree)).tocsr().astype(np.float32)

    def within(self, documents: Collection[str]) -> PassageGraph:
        """The graph of the chunks of ``documents`` only (a chunk id starts with its document id).

        A walk on it never passes through text of another document, so neither its reach nor its ranking depends
        on one.
        """
        wanted = frozenset(documents)
        rows = [i for i, chunk_id in enumerate(self.chunk_ids) if document_id_of(chunk_id) in wanted]
        part = self._weights[rows]
        columns = np.flatnonzero(np.diff(part.tocsc().indptr))  # entities some kept chunk names
        part = part[:, columns]
        chunk_index = {self.chunk_ids[i]: n for n, i in enumerate(rows)}
        entity_index = {self.entity_ids[int(j)]: n for n, j in enumerate(columns)}
        names = {name: kept for name, ids in self._names.items() if (kept := [e for e in ids if e in entity_index])}
        graph = PassageGraph.__new__(PassageGraph)
        graph._build(chunk_index, entity_index, part.tocsr(), names)
        return graph

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
        restart = np.zeros(len(self.entity_ids), dtype=np.float32)
        for entity_id in seeds:
            index = self._entity_index.get(entity_id)
            if index is not None:
                restart[index] = self._specificity[index]
        if not restart.any():
            return ChunkMass(self.chunk_ids, self._chunk_index, np.zeros(n_chunks))
        restart /= restart.sum()
        # The walk restarts at entities only, so at its fixed point a chunk's mass is what one step brings it from
        # the entities (chunks = damping * to_chunks @ entities), and the entities' mass solves
        # entities = (1 - damping) * restart + damping**2 * to_entities @ to_chunks @ entities. Iterating that is the
        # same walk with two steps per round: each round costs one step of the whole graph and shrinks the error by
        # damping**2 instead of damping, so half the rounds reach the tolerance.
        entities = restart.copy()
        twice = damping * damping
        for _ in range(max_iterations):
            updated = (1.0 - damping) * restart + twice * (self._to_entities @ (self._to_chunks @ entities))
            converged = float(np.abs(updated - entities).sum(dtype=np.float64)) < _TOLERANCE
            entities = updated
            if converged:
                break
        return ChunkMass(self.chunk_ids, self._chunk_index, damping * (self._to_chunks @ entities))
