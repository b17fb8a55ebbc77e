"""``PassageGraph``: personalized PageRank over the bipartite graph of current chunks and the entities they name."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

import numpy as np
import scipy.sparse as sp

from agrag.components.data_models.chunk import document_id_of
from agrag.components.data_models.passage_columns import ABOUT_WEIGHT, PassageColumns
from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.graph.chunk_mass import ChunkMass

_FEW = 0.1  # a vector with mass on at most this share of its nodes is multiplied from its nonzero entries only
_TOLERANCE = 1e-6  # the largest L1 distance of a walk's chunk masses from the exact ones


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
        self._build(chunk_index, entity_index, w, _names_in(edges.names, entity_index))

    def _build(
        self, chunk_index: dict[str, int], entity_index: dict[str, int], w: sp.csr_matrix, names: dict[str, list[str]]
    ) -> None:
        """Keep the graph of ``w`` (chunk rows, entity columns, numbered in the order of the two indexes)."""
        # The weights are kept, not the edge list: a document scope's graph is cut from them (the edges as Python
        # tuples took 230 MB at 30,000 chunks, the matrix 5 MB).
        self.chunk_ids, self._chunk_index = list(chunk_index), chunk_index
        self.entity_ids, self._entity_index = list(entity_index), entity_index
        self._weights, self._names = w, names
        self._by_entity: sp.csc_matrix | None = None  # the weights by entity, built on first use
        chunk_counts = np.asarray((w > 0).sum(axis=0)).ravel()
        self._specificity = 1.0 / np.maximum(chunk_counts, 1)
        chunk_degree = np.asarray(w.sum(axis=1)).ravel()
        entity_degree = np.asarray(w.sum(axis=0)).ravel()
        chunk_degree[chunk_degree == 0] = 1.0
        entity_degree[entity_degree == 0] = 1.0
        # The two halves of the column-stochastic transition of the bipartite graph: entity mass to chunks, chunk mass
        # to entities. float32 halves them and makes each step of the walk about a quarter faster (the walk's top 30
        # chunks equal float64's on a 100,000-chunk Zipf graph; masses agree to about 1e-5 relative).
        to_chunks = (w @ sp.diags(1.0 / entity_degree)).tocsr().astype(np.float32)
        to_entities = (w.T @ sp.diags(1.0 / chunk_degree)).tocsr().astype(np.float32)
        # Inside the two matrices the entities are numbered by falling chunk count: most entries of a step read the
        # mass of a few thousand hubs, and packed together those stay in cache (the walk 7% faster on a 1,000,000-chunk
        # Zipf graph). Each row keeps its entries in their order, so every sum adds the same numbers in the same order
        # and the masses are bit-identical to those of matrices in entity-id order.
        order = np.argsort(-chunk_counts, kind="stable")
        self._entity_position = np.empty(len(order), dtype=to_chunks.indices.dtype)
        self._entity_position[order] = np.arange(len(order))
        to_chunks = sp.csr_matrix(
            (to_chunks.data, self._entity_position[to_chunks.indices], to_chunks.indptr), shape=to_chunks.shape
        )
        self._to_chunks, self._to_entities = to_chunks, to_entities[order]
        self._chunk_degree, self._entity_degree = chunk_degree, entity_degree[order]  # the entities' by position

    @classmethod
    def from_columns(cls, columns: PassageColumns) -> PassageGraph:
        """The graph of ``GraphStore.passage_columns``: the same graph as ``PassageGraph`` of its ``passage_edges``.

        Built from numbered columns instead of a pair of strings per link (at 1,000,000 chunks the pairs took over
        four minutes and 9.6 GB to read and build from; the columns about 20 s and 2.3 GB).
        """
        entity_index = {e: i for i, e in enumerate(columns.entity_ids)}
        graph = cls.__new__(cls)
        chunk_index = {c: i for i, c in enumerate(columns.chunk_ids)}
        graph._build(chunk_index, entity_index, columns.weights(), _names_in(columns.names, entity_index))
        return graph

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

    def entities_of(self, chunk_id: str) -> list[str]:
        """The entities ``chunk_id`` names or is about (empty for a chunk not in the graph)."""
        row = self._chunk_index.get(chunk_id)
        if row is None:
            return []
        start, end = self._weights.indptr[row], self._weights.indptr[row + 1]
        return [self.entity_ids[int(j)] for j in self._weights.indices[start:end]]

    def chunks_of(self, entity_id: str) -> list[str]:
        """The chunks that name or are about ``entity_id`` (empty for an entity not in the graph)."""
        column = self._entity_index.get(entity_id)
        if column is None:
            return []
        if self._by_entity is None:
            self._by_entity = self._weights.tocsc()
        start, end = self._by_entity.indptr[column], self._by_entity.indptr[column + 1]
        return [self.chunk_ids[int(i)] for i in self._by_entity.indices[start:end]]

    def name_weights(self, groups: list[list[str]]) -> dict[str, float]:
        """Restart weights that make the entities one name gives walk as one entity of all their chunks.

        A name typed two ways, or joined to several titles, is several entities, each rarer than the name; left
        alone they would restart the walk as strongly as a name that rare. ``(c / n) ** 2`` for an entity of ``c``
        of the group's ``n`` chunks gives each of those chunks the restart one entity of ``n`` chunks would.
        """
        weights: dict[str, float] = {}
        for group in groups:
            counts = [self.chunk_count(e) for e in group]
            total = sum(counts)
            if len(group) > 1 and total:
                weights.update({e: (c / total) ** 2 for e, c in zip(group, counts, strict=True)})
        return weights

    def chunk_count(self, entity_id: str) -> int:
        """How many current chunks name or are about ``entity_id`` (0 if it is not in the graph)."""
        index = self._entity_index.get(entity_id)
        return 0 if index is None else round(1.0 / self._specificity[index])

    def personalized_pagerank(
        self,
        seeds: list[str],
        damping: float = 0.5,
        max_iterations: int = 50,
        weights: Mapping[str, float] | None = None,
    ) -> ChunkMass:
        """PageRank mass on every chunk for a walk that restarts at ``seeds``; empty if no seed is in the graph.

        Each seed restarts in proportion to its specificity (1 / its chunks), times its ``weights`` entry if given.
        Iterates until the masses are provably within 1e-6 (L1) of the walk's fixed point, or ``max_iterations``
        rounds. ``damping`` is the chance of following an edge rather than restarting, in [0, 1).
        """
        if not 0.0 <= damping < 1.0:
            raise ValueError(f"damping must be at least 0 and below 1, got {damping}")
        known = sorted({i for entity_id in seeds if (i := self._entity_index.get(entity_id)) is not None})
        if not known:
            return ChunkMass(self.chunk_ids, self._chunk_index, np.zeros(len(self.chunk_ids)))
        restart = self._specificity[known]
        if weights:
            restart = restart * np.asarray([weights.get(self.entity_ids[i], 1.0) for i in known], dtype=restart.dtype)
        first = self._first_step(self._entity_position[known], restart / restart.sum())
        # The walk restarts at entities only, so at its fixed point the chunks' mass c is what one step brings them
        # from the entities, whose mass is the restart plus one step from the chunks: with first = to_chunks @ restart,
        # c = damping * (1 - damping) * first + damping**2 * to_chunks @ to_entities @ c. Iterating that is the walk
        # with two steps a round, each round shrinking the L1 error by damping**2 at least, and it needs no last step
        # from the entities to the chunks.
        twice = damping * damping
        base = (damping * (1.0 - damping)) * first
        # A step keeps mass, so the fixed point's chunks hold damping / (1 + damping) of it. Starting with that total
        # removes the part of the error that shrank slowest, by exactly damping**2 a round (from the restart's total
        # the walk took 10 rounds on Zipf graphs of 200,000 and 1,000,000 chunks, from this one 6).
        chunks = (damping / (1.0 + damping)) * first
        for round_ in range(max_iterations):
            entities = self._to_entities @ chunks if round_ else self._entities_from_few(chunks)
            updated = self._to_chunks @ entities
            updated *= twice
            updated += base
            np.subtract(updated, chunks, out=chunks)  # the old masses are not needed again: reuse them for the change
            np.abs(chunks, out=chunks)
            change = float(chunks.sum(dtype=np.float64))
            chunks = updated
            if change * twice <= _TOLERANCE * (1.0 - twice):  # the error left is at most change * q / (1 - q), q = d**2
                break
        return ChunkMass(self.chunk_ids, self._chunk_index, chunks)

    def _first_step(self, seeds: np.ndarray, restart: np.ndarray) -> np.ndarray:
        """``to_chunks @ r`` for the restart ``r`` with ``restart`` on the entities at positions ``seeds``, 0 elsewhere.

        Read from the seeds' rows of ``to_entities`` (``to_chunks[c, e] = to_entities[e, c] * chunk_degree[c] /
        entity_degree[e]``): it touches only the seeds' chunks, where the whole product would read every edge.
        """
        rows = self._to_entities[seeds]
        step: np.ndarray = np.asarray(rows.T @ (restart / self._entity_degree[seeds])) * self._chunk_degree
        return step.astype(np.float32)

    def _entities_from_few(self, chunks: np.ndarray) -> np.ndarray:
        """``to_entities @ chunks``, read from the rows of ``to_chunks`` of the chunks with mass when they are few.

        The first round's chunks are the seeds' (about 1% of them at 1,000,000 chunks, even with a hub among the
        seeds): their rows hold a small part of the edges, where the whole product would read every edge.
        """
        reached = np.flatnonzero(chunks)
        if len(reached) > len(chunks) * _FEW:
            whole: np.ndarray = self._to_entities @ chunks
            return whole
        # to_entities[e, c] = to_chunks[c, e] * entity_degree[e] / chunk_degree[c]
        rows = self._to_chunks[reached]
        step: np.ndarray = np.asarray(rows.T @ (chunks[reached] / self._chunk_degree[reached])) * self._entity_degree
        return step.astype(np.float32)


def _names_in(pairs: Iterable[tuple[str, str]], entity_index: Mapping[str, int]) -> dict[str, list[str]]:
    """The entity ids of each normalized name, keeping only entities of the graph, in the pairs' order."""
    names: dict[str, list[str]] = {}
    for name, entity_id in pairs:
        if entity_id in entity_index:
            names.setdefault(name, []).append(entity_id)
    return names
