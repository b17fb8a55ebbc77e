"""The graph store roles that read: retrieval, scoped evidence, user-written queries, status and maintenance.

Each protocol serves one kind of client; ``GraphStore`` (``graph_store.py``) is their union.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.passage_columns import PassageColumns
from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.data_models.passage_names import PassageNames
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolved_entity import MergedEntity
from agrag.components.data_models.store_status import GraphCounts
from agrag.components.data_models.traversal_direction import TraversalDirection


@runtime_checkable
class GraphRetrievalReader(Protocol):
    """What retrieval reads over every document: chunks and entities by id, support, walks, name lookups.

    Callers: the retrievers, expanders and re-rankers in ``components/``, ``SearchEngine`` and the passage graph.
    """

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Return the stored chunks among ``chunk_ids``."""
        ...

    def get_entities(self, entity_ids: Sequence[str]) -> list[Entity]:
        """Return the stored entities among ``entity_ids``."""
        ...

    def supporting_chunk_ids(self, entity_ids: Sequence[str], limit: int | None = None) -> dict[str, list[str]]:
        """Current chunks about or mentioning each entity: chunks about it first, then most mentions.

        ``limit`` keeps the first that many of each entity.
        """
        ...

    def passage_edges(self) -> PassageEdges:
        """Every (chunk, entity) mention and about link of the current chunks."""
        ...

    def passage_columns(self) -> PassageColumns:
        """The same links as ``passage_edges``, as numbered columns (for building the ppr snapshot at scale)."""
        ...

    def passage_names(self, names: Sequence[str]) -> PassageNames:
        """The resolved entities current chunks name that these normalized names name, with their chunk counts."""
        ...

    def relations_of(self, entity_id: str) -> list[Relation]:
        """Return the relations touching an entity, in either direction."""
        ...

    def entity_ids_of_documents(self, document_ids: Sequence[str]) -> set[str]:
        """The resolved entities that current chunks of these documents name or are about."""
        ...

    def entity_records_of_documents(self, document_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(record id, resolved id, normalized name)`` of each entity record the documents' current chunks name.

        Merged members are included; chunks about a record count too.
        """
        ...

    def traverse(
        self,
        seed_ids: Sequence[str],
        relation_types: Sequence[str] | None = None,
        *,
        direction: TraversalDirection = TraversalDirection.BOTH,
        depth: int = 1,
        per_hop: int | None = None,
        limit: int | None = None,
    ) -> list[tuple[Relation, int]]:
        """Relations reached walking outward from the seeds (``both``, ``out`` or ``in``), each with its hop.

        Ends are resolved entities; no entity is expanded twice; ``per_hop`` keeps the best supported relations of
        each hop, ``limit`` caps the walk; ``relation_types`` (None or empty: all) limits the relations crossed.
        """
        ...

    def relation_types_of(self, entity_id: str) -> dict[str, int]:
        """The types of the relations touching an entity at one hop, either direction, with their counts."""
        ...

    def find_entities_by_name(self, name: str, limit: int = 5) -> list[Entity]:
        """The resolved entities whose name normalizes like ``name``."""
        ...

    def merged_members(self, entity_ids: Sequence[str]) -> dict[str, list[MergedEntity]]:
        """The entity records merged into each of ``entity_ids``, with the rule of each merge, by name then id.

        Keyed by resolved id; an entity nothing is merged into (or an unknown or merged id) is missing.
        """
        ...


@runtime_checkable
class GraphEvidenceReader(Protocol):
    """Evidence reads within a document scope, applied by the store in every query.

    Callers: ``pipelines/evidence_session.py`` (the evidence tools), the BFS expander and the entity retriever.
    """

    def get_chunks_in_scope(self, chunk_ids: Sequence[str], scope: Sequence[str] | None) -> list[Chunk]:
        """Return the stored chunks (current or superseded) among ``chunk_ids`` whose document is in ``scope``.

        In the order asked. ``scope`` is the document ids that may be read, None for every document; the store
        applies it in its query, so an out-of-scope chunk is missing, as an unknown one is.
        """
        ...

    def chunk_neighbours(self, chunk_id: str, direction: str, scope: Sequence[str] | None) -> list[Chunk]:
        """The chunks next to one in its document version, in one ``direction``.

        ``parent``, ``children``, ``siblings`` (the parent's other children), ``previous`` or ``next``; children and
        siblings come in document order. A chunk out of ``scope`` (or
        unknown) has none. Raises ``RetrievalError`` for another ``direction``.
        """
        ...

    def version_chunks_overlapping(
        self, document_id: str, version: str, start: int, end: int, scope: Sequence[str] | None
    ) -> list[Chunk]:
        """The chunks of one document version whose half-open span overlaps ``[start, end)``, by start offset.

        Section and text chunks alike; none if the document is out of ``scope``.
        """
        ...

    def document_version_info(
        self, document_ids: Sequence[str], scope: Sequence[str] | None
    ) -> dict[str, tuple[str, str]]:
        """``(current version, title)`` of each known document among ``document_ids`` in ``scope``.

        The version is ``''`` for a deleted document; a document out of scope is missing, as an unknown one is.
        """
        ...

    def visible_entities(self, entity_ids: Sequence[str], scope: Sequence[str] | None) -> list[Entity]:
        """The resolved entities among ``entity_ids`` that a current chunk of a document in ``scope`` names or is about.

        A merged member's id stands for its resolved entity, and its chunks count for it; each resolved entity comes
        once, where first asked for. Others are missing, as unknown ids are. ``scope`` is the document ids that may
        be read, None for every document; the store applies it in its query. Within a scope an entity's name, label
        and description come only from entity records in-scope chunks name (never another document's record).
        """
        ...

    def entities_named_in_scope(self, name: str, scope: Sequence[str] | None, limit: int = 5) -> list[Entity]:
        """The resolved entities that in-scope text calls ``name`` (normalized), named as ``visible_entities`` does."""
        ...

    def entity_support_in_scope(
        self, entity_ids: Sequence[str], scope: Sequence[str] | None, per_entity: int = 3
    ) -> dict[str, list[str]]:
        """At most ``per_entity`` current chunks in ``scope`` about or mentioning each resolved entity, best first.

        As ``supporting_chunk_ids`` orders them (about first, then most mentions, then id; members' chunks count for
        their resolved entity), keyed by resolved id; an entity with none is missing.
        """
        ...

    def scoped_relations(
        self,
        seed_ids: Sequence[str],
        scope: Sequence[str] | None,
        *,
        relation_types: Sequence[str] | None = None,
        depth: int = 1,
        per_hop: int | None = None,
        limit: int | None = None,
    ) -> list[tuple[Relation, int, list[str]]]:
        """Relations reached walking outward (both directions) from the seeds within ``scope``, with hop and chunks.

        Each comes with the hop that reached it and its chunk ids that are current and in scope (empty when all were
        superseded: a path, not an assertion). Within a scope a relation is crossed only if every chunk id is of an
        in-scope document and both ends are visible (``visible_entities``); seeds that are not visible start
        nothing. With ``scope`` None every relation with a chunk id is crossed. A relation without chunk ids never
        is. Otherwise as ``traverse``: ends resolved, no entity expanded twice, ``per_hop`` and ``limit`` caps.
        """
        ...


@runtime_checkable
class GraphQueryRunner(Protocol):
    """Read-only queries a user or a model wrote, and the schema they may read.

    Caller: the text-to-Cypher retriever.
    """

    def run_read_only(
        self,
        query: str,
        params: Mapping[str, Any] | None = None,
        max_rows: int = 1000,
        timeout_ms: int = 10_000,
        max_bytes: int = 4 * 1024 * 1024,
    ) -> tuple[list[str], list[list[Any]]]:
        """Run one read-only query a user or a model wrote; return its columns and (at most ``max_rows``) rows.

        Raises ``StoreError`` if the query would write, is not one valid statement, or fails:
        ``GraphQueryRefusedError`` (a write, an internal table, unbounded work), ``GraphQueryTimeoutError`` (past
        ``timeout_ms``), ``GraphQueryTooLargeError`` (rows past ``max_bytes``, or work past the buffer pool).
        """
        ...

    def schema_text(self) -> str:
        """The tables a query may read and their properties, described for a prompt (cheap to ask again)."""
        ...


@runtime_checkable
class GraphFactReader(Protocol):
    """Which current passages state each relation: what the facts collection mirrors.

    Callers: ``KnowledgeStore`` (settling the fact points of a commit), ``agrag repair`` and ``agrag status``.
    """

    def stated_facts(self, relations: Sequence[tuple[str, str]], incoming: Sequence[str] = ()) -> dict[str, Fact]:
        """Each relation asked for as ``(relation id, source record id)``, as a fact, by id.

        With its records' names, its type and sentence, and the current (committed) chunks that state it, the
        uncommitted ``incoming`` ones counted current too (a commit being written); a relation that is not stored,
        or that no such chunk states, is missing.
        """
        ...

    def supported_facts(self) -> list[Fact]:
        """Every relation a current chunk states, as a fact with its records' names and its current chunks, by id."""
        ...

    def supported_relation_count(self) -> int:
        """How many relations some chunk supports: about the points the facts collection holds."""
        ...


@runtime_checkable
class GraphStatusReader(Protocol):
    """Status and maintenance: facts about the data dir, counts, what the vector collections must hold.

    Callers: ``pipelines/store_factory.py`` and ``store_status.py``, vector repair, the service, ``agrag repair``.
    """

    def info(self) -> dict[str, str]:
        """Facts about the data dir recorded at first ingest (for example the embedding model)."""
        ...

    def set_info(self, values: Mapping[str, str]) -> None:
        """Record facts about the data dir."""
        ...

    def counts(self) -> Mapping[str, int]:
        """Return the number of rows of every node and relationship table."""
        ...

    def graph_counts(self, scope: Sequence[str] | None = None) -> GraphCounts:
        """Current documents and chunks, entities per label, relations per type (within ``scope`` if given)."""
        ...

    def embedded_counts(self) -> dict[str, int]:
        """The fewest points each vector collection (chunks, entities, communities) must hold, by the graph."""
        ...

    def embedded_sample(self, limit: int = 32) -> dict[str, list[str]]:
        """Up to ``limit`` ids of what each vector collection must hold, keyed as ``embedded_counts``."""
        ...

    def searchable_chunk_ids(self) -> list[str]:
        """The ids of every stored chunk that is embedded (current or superseded), by id."""
        ...

    def all_entities(self) -> list[tuple[Entity, bool]]:
        """Every stored entity record with whether it was merged into another, by id."""
        ...

    def close(self) -> None:
        """Release the database."""
        ...
