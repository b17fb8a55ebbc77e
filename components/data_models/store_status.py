"""``StoreStatus``: what a data dir holds, what its graph was built with, and its last ingestion."""

from __future__ import annotations

from dataclasses import dataclass, field

from agrag.components.data_models.immutable import Immutable
from agrag.components.data_models.ingestion_run import IngestionRun

# The StoreInfo key under which an ingestion records the ontology it pruned extraction to (JSON).
ONTOLOGY_KEY = "ontology"


@dataclass(frozen=True, slots=True)
class RecordedOntology(Immutable):
    """The ontology the last ingestion kept its entities and relations to.

    Attributes:
        name: Its name (the file under conf/ingest/ontology, e.g. ``open``).
        entity_labels: The labels allowed; empty allows every label.
        relation_types: Each allowed relation type with its allowed (source label, target label) pairs; empty
            allows every relation.
    """

    name: str
    entity_labels: tuple[str, ...] = ()
    relation_types: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GraphCounts(Immutable):
    """What the graph holds now, overall or within a document scope.

    Attributes:
        documents: Documents with a current version (deleted ones are not counted).
        chunks: Current chunks of those documents, every kind (text, table, section).
        entity_labels: Resolved entities per label, most first (within a scope: those a current chunk in scope
            names or is about).
        relation_types: Relations per type, most first (within a scope: those whose every source passage lies in
            the scope).
        communities: Communities of every level; None within a scope (a community's report merges what every
            document says).
    """

    documents: int
    chunks: int
    entity_labels: dict[str, int]
    relation_types: dict[str, int]
    communities: int | None


@dataclass(frozen=True, slots=True)
class StoreStatus(Immutable):
    """The state of a data dir, as ``agrag status`` and ``GET /v1/status`` show it.

    Attributes:
        documents: Documents with a current version.
        chunks: Their current chunks (every kind).
        entities: Resolved entities (merged ones count once).
        relations: Relations between them.
        communities: Communities of every level; None when the status is of a document scope.
        entity_labels: Resolved entities per label, most first.
        relation_types: Relations per type, most first.
        ontology: The ontology the last ingestion pruned to; None before the first ingestion that recorded it.
        generation: Changes on every committed write (empty before the first).
        last_ingestion: The last ingestion or delete that finished, with its outcome; None when none is known
            (or within a scope: its report names every document's files).
        scope: The document ids the counts are limited to; None when they cover every document.
        facts: Facts the ``fact`` method can find (fact vectors); None when the status is of a document scope.
        facts_unsearchable: Relations a passage states that have no fact vector (all of them in a data dir made
            before facts were searchable: ``agrag repair`` embeds them); 0 within a scope.
    """

    documents: int
    chunks: int
    entities: int
    relations: int
    communities: int | None
    entity_labels: dict[str, int]
    relation_types: dict[str, int]
    ontology: RecordedOntology | None
    generation: str
    last_ingestion: IngestionRun | None = None
    scope: tuple[str, ...] | None = None
    facts: int | None = None
    facts_unsearchable: int = 0
