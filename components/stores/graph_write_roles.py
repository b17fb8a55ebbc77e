"""The graph store roles that write: documents, ingest writes, entity resolution, communities.

Each protocol serves one kind of client; ``GraphStore`` (``graph_store.py``) is their union.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.graph_load import GraphLoad
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import MergeDecision, MergeLogEntry, ResolutionCandidate
from agrag.components.data_models.retirement import Retirement
from agrag.components.data_models.stored_document import StoredDocument


@runtime_checkable
class GraphDocumentStore(Protocol):
    """The documents of the graph: versions, origins, settings hashes and plans, listing and deleting.

    Callers: ingestion planning (``flows/ingest_tasks.py``, ``file_statuses.py``, ``source_folders.py``), re-extraction,
    the delete flow, ``agrag documents`` and the documents tool.
    """

    def document_versions(self, document_ids: Sequence[str]) -> dict[str, str]:
        """Return the current version of each known document."""
        ...

    def stored_documents(self, document_ids: Sequence[str]) -> dict[str, StoredDocument]:
        """Return the committed, not deleted documents among ``document_ids``, with the folder each came from."""
        ...

    def record_source_folders(self, folders: Mapping[str, str]) -> None:
        """Record the folder each document (id → folder) came from, for documents stored before agrag did."""
        ...

    def document_config_hashes(self, document_ids: Sequence[str]) -> dict[str, str]:
        """Return the hash of the settings each known document was ingested with ('' if not recorded)."""
        ...

    def set_config_hashes(self, hashes: Mapping[str, str]) -> None:
        """Record the settings hash each document (id → hash) was last extracted with."""
        ...

    def set_document_plans(self, plans: Mapping[str, str]) -> None:
        """Record the plan (``AppliedPlan`` JSON) each document (id → plan) was last ingested or re-extracted with."""
        ...

    def document_chunk_ids(self, document_id: str, version: str | None = None) -> list[str]:
        """The ids of a document's chunks, of every version or of one, in document order."""
        ...

    def delete_document(self, document_id: str) -> list[str]:
        """Commit a document's delete (its chunks retired before, see ``retire_chunks``); return its chunk ids."""
        ...

    def documents(self, scope: Sequence[str] | None = None, offset: int = 0, limit: int = 100) -> list[StoredDocument]:
        """The committed documents (within ``scope`` if given), by source path, one page (empty past the last).

        Raises ``PageRangeError`` for an ``offset`` outside 0 to ``MAX_OFFSET`` or a ``limit`` outside 1 to
        ``MAX_PAGE_DOCUMENTS`` (``agrag.components.data_models.paging``).
        """
        ...


@runtime_checkable
class GraphIngestWriter(Protocol):
    """What ingestion and re-extraction write: chunks, commits, entities, links, and retiring what they replace.

    Callers: ``flows/write_tasks.py``, ``flows/reextract_write.py``, the delete flow and ``KnowledgeStore``.
    """

    def write_chunks(self, documents: Sequence[Document], chunks: Sequence[Chunk]) -> list[str]:
        """Store the chunks of document versions with their next and parent links.

        Marks the chunks of the documents' other versions as superseded and returns their ids. The documents
        themselves are written by ``commit_documents``, last, so a version counts as ingested only when complete.
        """
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

    def graph_is_empty(self) -> bool:
        """True when no document, chunk or entity is stored: ``bulk_load`` may write this graph."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """Make the writes inside one transaction: readers see all of them or none, and a crash keeps none."""
        ...

    def bulk_load(self, load: GraphLoad) -> None:
        """Write a first ingestion into the empty graph at bulk speed, inside ``transaction()``.

        What the chunk, entity, link and relation upserts would write; the documents stay uncommitted until
        ``commit_documents``.
        """
        ...

    def upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Create the entities not yet stored; stored entities keep their name, label and description."""
        ...

    def upsert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Link chunks to the entities they name."""
        ...

    def upsert_about(self, about: Sequence[Mention]) -> None:
        """Link chunks to the entities they are about."""
        ...

    def upsert_relations(self, relations: Sequence[Relation]) -> None:
        """Create relations, or add supporting chunks to stored ones."""
        ...

    def retire_chunks(
        self, chunk_ids: Sequence[str], keep: Collection[str] = (), incoming: Sequence[str] = ()
    ) -> Retirement:
        """Take what only these superseded or deleted chunks supported out of the graph (idempotent).

        Entities in ``keep`` stay even when no current chunk names them any more (text still to be written names
        them), and so do those the uncommitted chunks ``incoming`` name (the commit being written makes them current).
        """
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


@runtime_checkable
class GraphResolutionLog(Protocol):
    """Entity resolution: what new entities may resolve into, merges as pointers, the merge log, near misses.

    Callers: the resolve and write tasks, the entity resolver, ``agrag merges`` and the admin routes.
    """

    def canonical_entities(self) -> list[Entity]:
        """Every stored entity not merged into another: what new entities may resolve into."""
        ...

    def resolved_ids(self, entity_ids: Sequence[str]) -> dict[str, str]:
        """The resolved id of each stored entity among ``entity_ids`` (its merge target, else itself)."""
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


@runtime_checkable
class GraphCommunityStore(Protocol):
    """Communities: the weighted entity graph, what reports are written from, the stored hierarchy.

    Callers: ``flows/community_tasks.py``, the community expander, vector repair.
    """

    def entity_graph(self) -> tuple[list[str], list[tuple[str, str, float]]]:
        """The resolved entities and the relations between them, weighted by supporting chunks."""
        ...

    def community_inputs(
        self, entity_ids: Sequence[str], among: Collection[str] | None = None
    ) -> tuple[list[Entity], list[Relation], list[Chunk], list[tuple[str, str]]]:
        """The entities, their relations, the current chunks naming them, and (chunk, entity) mentions.

        A relation is kept when its other end is one of ``entity_ids``, or of ``among`` when given (a part of a
        larger set being reported on), or a record merged into one of them.
        """
        ...

    def replace_communities(self, communities: Sequence[Community]) -> None:
        """Store this community hierarchy (with reports) in place of the previous one."""
        ...

    def communities(self) -> list[Community]:
        """Every stored community with its report."""
        ...

    def communities_of(self, entity_ids: Sequence[str]) -> list[Community]:
        """The stored communities holding any of these resolved entities, with their reports."""
        ...

    def community_ids_of_documents(self, document_ids: Sequence[str]) -> set[str]:
        """The communities holding an entity that current chunks of these documents name or are about."""
        ...
