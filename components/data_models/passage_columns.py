"""``PassageColumns``: the passage-entity graph of the current chunks, as numbered columns (no pair per edge)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

ABOUT_WEIGHT = 3.0  # a chunk is tied to the entity it is about (its title) three times as strongly as to a mention
MENTION_WEIGHT = 1.0

Positions = npt.NDArray[np.int32] | npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True, eq=False)
class PassageColumns:
    """The same graph as ``PassageEdges``, numbered: what ``PassageGraph.from_columns`` builds its walk from.

    Why: at 1,000,000 chunks the edge pairs are 12.7 million Python tuples of two strings; reading them as pairs and
    sorting them took over three minutes and 9.6 GB, read as columns 15 s and 2.3 GB.

    Attributes:
        chunk_ids: The current chunks with at least one link, sorted.
        entity_ids: The (resolved) entities they link to, sorted.
        mention_chunks: For each mention link, the position of its chunk in ``chunk_ids`` (repeats allowed).
        mention_entities: ... and of its entity in ``entity_ids``.
        about_chunks: For each about link, the position of its chunk.
        about_entities: ... and of its entity.
        names: (normalized name, resolved entity id) pairs, as in ``PassageEdges``.
    """

    chunk_ids: list[str]
    entity_ids: list[str]
    mention_chunks: Positions
    mention_entities: Positions
    about_chunks: Positions
    about_entities: Positions
    names: tuple[tuple[str, str], ...] = ()

    def weights(self) -> sp.csr_matrix:
        """The chunk-by-entity weight matrix: 1 for a mention, ``ABOUT_WEIGHT`` for an about link (which wins).

        A pair linked several times counts once, as ``PassageEdges``' pairs do.
        """
        n_entities = len(self.entity_ids)
        keys = np.concatenate(
            [
                self.about_chunks.astype(np.int64) * n_entities + self.about_entities,
                self.mention_chunks.astype(np.int64) * n_entities + self.mention_entities,
            ]
        )
        # np.unique keeps each key's first occurrence: the about links come first, so an about link wins
        unique, first = np.unique(keys, return_index=True)
        del keys
        values = np.where(first < len(self.about_chunks), ABOUT_WEIGHT, MENTION_WEIGHT)
        rows, columns = np.divmod(unique, n_entities)
        return sp.csr_matrix((values, (rows, columns)), shape=(len(self.chunk_ids), n_entities))
