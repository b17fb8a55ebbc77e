"""The parent (section) chunk of each child chunk found, so a result can show the whole passage."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.data_models.chunk import Chunk
from agrag.components.stores.graph_store import GraphStore


def parents_of(graph: GraphStore | None, chunks: Sequence[Chunk]) -> dict[str, Chunk]:
    """Parent chunk id → parent chunk, for the chunks that have one (none without ``graph``)."""
    wanted = sorted({c.parent_id for c in chunks if c.parent_id})
    if graph is None or not wanted:
        return {}
    return {p.id: p for p in graph.get_chunks(wanted)}
