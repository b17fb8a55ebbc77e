"""``GraphLoad``: everything a first ingestion writes to an empty graph, handed to the store in one piece."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.relation import Relation


@dataclass(frozen=True, slots=True)
class GraphLoad:
    """The rows of a bulk first load: documents (not yet committed), their chunks, entities and links.

    Attributes:
        documents: The document versions; they are committed afterwards (``commit_documents``), in the same
            transaction.
        chunks: Their chunks, every one current.
        entities: The entities the chunks name (a relation end counts).
        mentions: Links from chunks to the entities they name; ``about`` to those they are about.
        relations: Relations with their supporting chunks; several entries with one id are one relation whose
            support is the union of theirs.
    """

    documents: tuple[Document, ...]
    chunks: tuple[Chunk, ...]
    entities: tuple[Entity, ...]
    mentions: tuple[Mention, ...]
    about: tuple[Mention, ...]
    relations: tuple[Relation, ...]
