"""``PassageEdges``: the passage-entity graph of the current chunks, as edge lists."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.immutable import Immutable


@dataclass(frozen=True, slots=True)
class PassageEdges(Immutable):
    """(chunk id, entity id) pairs: the entities each current chunk names, and those it is about."""

    mentions: tuple[tuple[str, str], ...]
    about: tuple[tuple[str, str], ...]
