"""``PassageEdges``: the passage-entity graph of the current chunks, as edge lists."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from agrag.components.data_models.chunk import document_id_of
from agrag.components.data_models.immutable import Immutable


@dataclass(frozen=True, slots=True)
class PassageEdges(Immutable):
    """(chunk id, entity id) pairs: the entities each current chunk names, and those it is about.

    ``names`` pairs normalized entity names with the (resolved) entity ids they name, so a query's words can be
    matched to graph nodes whatever the entities' labels.
    """

    mentions: tuple[tuple[str, str], ...]
    about: tuple[tuple[str, str], ...]
    names: tuple[tuple[str, str], ...] = ()

    def within(self, documents: Collection[str]) -> PassageEdges:
        """The edges of the chunks of ``documents`` only (a chunk id starts with its document id)."""
        wanted = frozenset(documents)
        return PassageEdges(
            tuple(pair for pair in self.mentions if document_id_of(pair[0]) in wanted),
            tuple(pair for pair in self.about if document_id_of(pair[0]) in wanted),
            self.names,
        )
