"""The graph store interface: documents, chunks, entities and relations, and the links between them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.data_models.relation import Relation

# StoreInfo key that changes on every committed write: readers that cache graph snapshots compare it.
GENERATION_KEY = "generation"


@runtime_checkable
class GraphStore(Protocol):
    """What ingestion writes and retrieval reads in the graph."""

    def info(self) -> dict[str, str]:
        """Facts about the data dir recorded at first ingest (for example the embedding model)."""
        ...

    def set_info(self, values: Mapping[str, str]) -> None:
        """Record facts about the data dir."""
        ...

    def document_versions(self, document_ids: Sequence[str]) -> dict[str, str]:
        """Return the current version of each known document."""
        ...

    def write_chunks(self, documents: Sequence[Document], chunks: Sequence[Chunk]) -> list[str]:
        """Store the chunks of document versions with their next and parent links.

        Marks the chunks of the documents' other versions as superseded and returns their ids. The documents
        themselves are written by ``commit_documents``, last, so a version counts as ingested only when complete.
        """
        ...

    def commit_documents(self, documents: Sequence[tuple[Document, int]]) -> None:
        """Record each document version (with its chunk count) as current and fully written."""
        ...

    def existing_entity_ids(self, entity_ids: Sequence[str]) -> set[str]:
        """Return which of ``entity_ids`` are stored."""
        ...

    def upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Create the entities not yet stored; stored entities keep their name, label and description."""
        ...

    def upsert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Link chunks to the entities they name."""
        ...

    def upsert_relations(self, relations: Sequence[Relation]) -> None:
        """Create relations, or add supporting chunks to stored ones."""
        ...

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Return the stored chunks among ``chunk_ids``."""
        ...

    def get_entities(self, entity_ids: Sequence[str]) -> list[Entity]:
        """Return the stored entities among ``entity_ids``."""
        ...

    def supporting_chunk_ids(self, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        """Current chunks about or mentioning each entity: chunks about it first, then most mentions."""
        ...

    def upsert_about(self, about: Sequence[Mention]) -> None:
        """Link chunks to the entities they are about."""
        ...

    def passage_edges(self) -> PassageEdges:
        """Every (chunk, entity) mention and about link of the current chunks."""
        ...

    def relations_of(self, entity_id: str) -> list[Relation]:
        """Return the relations touching an entity, in either direction."""
        ...

    def counts(self) -> Mapping[str, int]:
        """Return the number of rows of every node and relationship table."""
        ...

    def close(self) -> None:
        """Release the database."""
        ...
