"""The graph store interface: documents, chunks, entities and relations, and the links between them."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import MergeDecision, MergeLogEntry, ResolutionCandidate
from agrag.components.data_models.retirement import Retirement
from agrag.components.data_models.store_status import GraphCounts
from agrag.components.data_models.stored_document import StoredDocument

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

    def document_config_hashes(self, document_ids: Sequence[str]) -> dict[str, str]:
        """Return the hash of the settings each known document was ingested with ('' if not recorded)."""
        ...

    def stored_documents(self, document_ids: Sequence[str]) -> dict[str, StoredDocument]:
        """Return the committed, not deleted documents among ``document_ids``, with the folder each came from."""
        ...

    def record_source_folders(self, folders: Mapping[str, str]) -> None:
        """Record the folder each document (id → folder) came from, for documents stored before agrag did."""
        ...

    def commit_documents(
        self,
        documents: Sequence[tuple[Document, int]],
        config_hash: str = "",
        *,
        config_hashes: Mapping[str, str] | None = None,
        plans: Mapping[str, str] | None = None,
    ) -> None:
        """Record each document version (with its chunk count, settings hash and plan) as current and written."""
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

    def retire_chunks(self, chunk_ids: Sequence[str], keep: Collection[str] = ()) -> Retirement:
        """Take what only these superseded or deleted chunks supported out of the graph (idempotent).

        Entities in ``keep`` stay even when no current chunk names them any more (text still to be written names
        them).
        """
        ...

    def entity_ids_of_documents(self, document_ids: Sequence[str]) -> set[str]:
        """The resolved entities that current chunks of these documents name or are about."""
        ...

    def entity_records_of_documents(self, document_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(record id, resolved id, normalized name)`` of each entity record the documents' current chunks name.

        Merged members are included; chunks about a record count too.
        """
        ...

    def community_ids_of_documents(self, document_ids: Sequence[str]) -> set[str]:
        """The communities holding an entity that current chunks of these documents name or are about."""
        ...

    def document_chunk_ids(self, document_id: str, version: str | None = None) -> list[str]:
        """The ids of a document's chunks, of every version or of one, in document order."""
        ...

    def delete_document(self, document_id: str) -> list[str]:
        """Mark a document deleted; return every chunk id of it, to retire."""
        ...

    def entities_of_chunks(self, chunk_ids: Sequence[str]) -> set[str]:
        """The entity records these chunks name or are about."""
        ...

    def unlink_chunks(self, chunk_ids: Sequence[str]) -> None:
        """Remove these chunks' mentions, about links and relation support (idempotent); the chunks stay."""
        ...

    def drop_unnamed_entities(self, entity_ids: Sequence[str]) -> list[str]:
        """Delete those of ``entity_ids`` no current chunk names any more; return them."""
        ...

    def resolved_ids(self, entity_ids: Sequence[str]) -> dict[str, str]:
        """The resolved id of each stored entity among ``entity_ids`` (its merge target, else itself)."""
        ...

    def set_config_hashes(self, hashes: Mapping[str, str]) -> None:
        """Record the settings hash each document (id → hash) was last extracted with."""
        ...

    def canonical_entities(self) -> list[Entity]:
        """Every stored entity not merged into another: what new entities may resolve into."""
        ...

    def apply_resolution(
        self,
        decisions: Sequence[MergeDecision],
        candidates: Sequence[ResolutionCandidate],
        run_id: str,
        *,
        positions: Sequence[int] | None = None,
    ) -> None:
        """Record merges as pointers from member to resolved entity, log every decision, keep the near misses.

        ``positions``: each decision's place in its run's list (which names its log line) when ``decisions`` are a
        part of it; by default they are numbered from 0.
        """
        ...

    def merge_log(self) -> list[MergeLogEntry]:
        """Every resolution decision, oldest run first."""
        ...

    def undo_merge(self, key: str) -> list[MergeLogEntry]:
        """Undo the active merge with this log id, or every active merge of this member entity id."""
        ...

    def candidates(self) -> list[ResolutionCandidate]:
        """The near misses of entity resolution, most similar first."""
        ...

    def entity_graph(self) -> tuple[list[str], list[tuple[str, str, float]]]:
        """The resolved entities and the relations between them, weighted by supporting chunks."""
        ...

    def community_inputs(
        self, entity_ids: Sequence[str]
    ) -> tuple[list[Entity], list[Relation], list[Chunk], list[tuple[str, str]]]:
        """The entities, the relations among them, the current chunks naming them, and (chunk, entity) mentions."""
        ...

    def replace_communities(self, communities: Sequence[Community]) -> None:
        """Store this community hierarchy (with reports) in place of the previous one."""
        ...

    def communities(self) -> list[Community]:
        """Every stored community with its report."""
        ...

    def traverse(
        self,
        seed_ids: Sequence[str],
        relation_types: Sequence[str] | None = None,
        *,
        direction: str = "both",
        depth: int = 1,
        per_hop: int | None = None,
        limit: int | None = None,
    ) -> list[tuple[Relation, int]]:
        """Relations reached walking outward from the seeds (``both``, ``out`` or ``in``), each with its hop.

        Ends are resolved entities; no entity is expanded twice; ``per_hop`` keeps the best supported relations of
        each hop, ``limit`` caps the walk; ``relation_types`` (None or empty: all) limits the relations crossed.
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

    def relation_types_of(self, entity_id: str) -> dict[str, int]:
        """The types of the relations touching an entity at one hop, either direction, with their counts."""
        ...

    def find_entities_by_name(self, name: str, limit: int = 5) -> list[Entity]:
        """The resolved entities whose name normalizes like ``name``."""
        ...

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
        """The tables a query may read and their properties, described for a prompt."""
        ...

    def counts(self) -> Mapping[str, int]:
        """Return the number of rows of every node and relationship table."""
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

    def graph_counts(self, scope: Sequence[str] | None = None) -> GraphCounts:
        """Current documents and chunks, entities per label, relations per type (within ``scope`` if given)."""
        ...

    def documents(self, scope: Sequence[str] | None = None, offset: int = 0, limit: int = 100) -> list[StoredDocument]:
        """The committed documents (within ``scope`` if given), by source path."""
        ...

    def close(self) -> None:
        """Release the database."""
        ...
