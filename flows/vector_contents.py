"""What each vector collection holds, as the graph records it: every point's id, keyword text and payload.

Everything of a point but its dense vector is derived from the graph, with the builders ingestion writes with
(``embedding_texts`` for the text the keyword leg indexes, ``vector_payloads`` for the payload), so a point written
again is the point ingestion wrote: a superseded chunk stays marked superseded, a merged entity merged. Two
writers take the dense vector from elsewhere: ``agrag repair`` embeds the text again (``vector_repair``), and
``agrag migrate-vectors`` copies the vector already stored (``vector_migration``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.fact import Fact
from agrag.components.embedders.embedding_texts import (
    chunk_embedding_text,
    community_report_text,
    entity_embedding_text,
    fact_keyword_text,
)
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.vector_payloads import chunk_payload, community_payload, entity_payload, fact_payload
from agrag.components.stores.vector_store import STATUS_FIELD, SUPERSEDED, VectorCollection, VectorPoint

# Points read from the graph (and embedded or copied) at a time, so memory stays flat on a large graph.
POINT_SLICE = 512


@dataclass(frozen=True, slots=True)
class PointContent:
    """A vector point without its dense vector: our id, the text its keyword leg indexes, and its payload."""

    id: str
    text: str
    payload: dict[str, Any]

    def with_vector(self, dense: Sequence[float]) -> VectorPoint:
        """The point to write, with ``dense`` as its vector."""
        return VectorPoint(self.id, dense, self.text, self.payload)


def chunk_content(chunk: Chunk) -> PointContent:
    """A chunk's point as ingestion writes it, marked superseded when the chunk is not its document's current text."""
    payload = chunk_payload(chunk)
    if not chunk.current:
        payload[STATUS_FIELD] = SUPERSEDED
    return PointContent(chunk.id, chunk_embedding_text(chunk), payload)


def entity_content(entity: Entity, merged: bool) -> PointContent:
    """An entity's point as ingestion writes it (kept, marked merged, when merged into another)."""
    return PointContent(entity.id, entity_embedding_text(entity), entity_payload(entity, merged=merged))


def community_content(community: Community) -> PointContent:
    """A community report's point as ingestion writes it."""
    return PointContent(community.id, community_report_text(community), community_payload(community))


def fact_content(fact: Fact) -> PointContent:
    """A fact's point as a commit settles it: its text, and the current passages that state it."""
    return PointContent(fact.id, fact_keyword_text(fact), fact_payload(fact))


@dataclass(frozen=True, slots=True)
class CollectionContents:
    """The points one collection must hold, as the graph records them.

    ``ids`` lists every point by id (chunks by id, entities by id, communities as stored); ``read`` gives the
    contents of some of them, in the order asked, so a caller can walk a large collection a slice at a time.

    Usage:
        ```python
        contents = collection_contents(store.graph, VectorCollection.CHUNKS)
        for part in contents.slices():
            points = [c.with_vector(v) for c, v in zip(contents.read(part), embed(part), strict=True)]
        ```
    """

    collection: VectorCollection
    ids: tuple[str, ...]
    read: Callable[[Sequence[str]], list[PointContent]]

    def slices(self, size: int = POINT_SLICE) -> Iterator[tuple[str, ...]]:
        """The ids, ``size`` at a time."""
        for start in range(0, len(self.ids), size):
            yield self.ids[start : start + size]


def collection_contents(graph: GraphStore, collection: VectorCollection) -> CollectionContents:
    """What ``collection`` must hold, read from ``graph``: chunks, entity records, communities or facts.

    Every embedded chunk, every entity record, every community, and every relation a current passage states. Chunks
    are read a slice at a time (``GraphStore.get_chunks``); entities, communities and facts are read whole once, as
    the graph store lists them.
    """
    if collection is VectorCollection.CHUNKS:
        return CollectionContents(
            collection,
            tuple(graph.searchable_chunk_ids()),
            lambda ids: [chunk_content(c) for c in graph.get_chunks(ids)],
        )
    if collection is VectorCollection.ENTITIES:
        entities = {entity.id: (entity, merged) for entity, merged in graph.all_entities()}
        return CollectionContents(
            collection, tuple(entities), lambda ids: [entity_content(*entities[i]) for i in ids if i in entities]
        )
    if collection is VectorCollection.FACTS:
        facts = {fact.id: fact for fact in graph.supported_facts()}
        return CollectionContents(
            collection, tuple(facts), lambda ids: [fact_content(facts[i]) for i in ids if i in facts]
        )
    communities = {c.id: c for c in graph.communities()}
    return CollectionContents(
        collection, tuple(communities), lambda ids: [community_content(communities[i]) for i in ids if i in communities]
    )
