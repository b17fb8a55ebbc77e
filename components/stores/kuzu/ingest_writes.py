"""``KuzuIngestWrites``: the ingest writes of the Kùzu store (chunks, commits, entities, links, retirement)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import pairwise
from typing import Any

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.retirement import Retirement
from agrag.components.stores.kuzu import ingest_cypher as cy
from agrag.components.stores.kuzu.connection import KuzuConnection
from agrag.components.stores.kuzu.rows import ChunkRow, DocumentRow, EntityRow, RelationRow


class KuzuIngestWrites(KuzuConnection):
    """What ingestion and re-extraction write: chunks and their links, commits, entities, mentions, relations.

    And what they take out again: the support of retired chunks, the links of re-extracted ones, orphan entities.
    Links are written by one ``UNWIND`` statement per 2,000 rows while the graph is small, and one statement a row
    once it holds ``per_row_from`` chunks or entities (see ``_large``).
    """

    per_row_from = 20_000

    def write_chunks(self, documents: Sequence[Document], chunks: Sequence[Chunk]) -> list[str]:
        """Store the chunks of document versions, uncommitted, and their links; return the other versions' chunks.

        No read sees the new chunks until ``commit_documents`` commits their versions, which also supersedes the
        chunk ids returned here (every older chunk of these documents, so a write killed before the commit retires
        the same when run again).
        """
        self._write_batched(cy.UPSERT_CHUNKS, "rows", [ChunkRow.params(c) for c in chunks])
        large = self._large()
        links = [{"document_id": c.document_id, "chunk_id": c.id} for c in chunks]
        if large:
            self._write_batched(cy.MERGE_DOCUMENT_IDS, "ids", sorted({c.document_id for c in chunks}))
            self._upsert_each(cy.FIND_HAS_CHUNK, cy.CREATE_HAS_CHUNK, links)
        else:
            self._write_batched(cy.LINK_DOCUMENT_CHUNKS, "pairs", links)
        by_document: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_document.setdefault(chunk.document_id, []).append(chunk)
        next_pairs = [
            {"a": a.id, "b": b.id}
            for group in by_document.values()
            for a, b in pairwise(sorted(group, key=lambda c: c.order))
        ]
        parents = [{"a": c.id, "b": c.parent_id} for c in chunks if c.parent_id]
        if large:
            self._upsert_each(cy.FIND_NEXT, cy.CREATE_NEXT, next_pairs)
            self._upsert_each(cy.FIND_PARENT, cy.CREATE_PARENT, parents)
        else:
            self._write_batched(cy.LINK_NEXT, "pairs", next_pairs)
            self._write_batched(cy.LINK_PARENT, "pairs", parents)
        versions = [{"id": d.id, "version": d.version} for d in documents]
        return [row[0] for row in self._write_batched(cy.OLDER_CHUNKS, "rows", versions)]

    def commit_documents(
        self,
        documents: Sequence[tuple[Document, int]],
        config_hash: str = "",
        *,
        config_hashes: Mapping[str, str] | None = None,
        plans: Mapping[str, str] | None = None,
    ) -> None:
        """Commit each document version (with its chunk count): from here on reads see it, and only it, as current.

        One statement, which Kùzu commits whole: the versions, and their chunks current (older versions' superseded).
        ``config_hash`` names the settings it was ingested with (``config_hashes`` per document id, where given);
        ``plans`` the plan (``AppliedPlan`` JSON) each was ingested with. Also records a new ``generation``, so
        readers that cache the graph know it changed.
        """
        rows = [
            DocumentRow.params(
                d,
                chunk_count=count,
                config_hash=(config_hashes or {}).get(d.id, config_hash),
                plan=(plans or {}).get(d.id, ""),
            )
            for d, count in documents
        ]
        if rows:
            self._write(cy.COMMIT_DOCUMENTS, {"rows": rows})  # not in slices: a commit is one statement
        self._bump_generation()

    def existing_entity_ids(self, entity_ids: Sequence[str]) -> set[str]:
        """Return which of ``entity_ids`` are stored."""
        return {row[0] for row in self._run_batched(cy.STORED_ENTITIES, "ids", sorted(set(entity_ids)))}

    def upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Create the entities not yet stored; stored entities keep their name, label and description."""
        self._write_batched(cy.UPSERT_ENTITIES, "rows", [EntityRow.params(e) for e in entities])

    def upsert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Link chunks to the entities they name."""
        rows = [{"chunk_id": m.chunk_id, "entity_id": m.entity_id, "count": m.count} for m in mentions]
        if self._large():
            self._upsert_each(cy.FIND_MENTION, cy.CREATE_MENTION, rows)
        else:
            self._write_batched(cy.UPSERT_MENTIONS, "rows", rows)

    def upsert_about(self, about: Sequence[Mention]) -> None:
        """Link chunks to the entities they are about."""
        rows = [{"chunk_id": m.chunk_id, "entity_id": m.entity_id} for m in about]
        if self._large():
            self._upsert_each(cy.FIND_ABOUT, cy.CREATE_ABOUT, rows)
        else:
            self._write_batched(cy.UPSERT_ABOUT, "rows", rows)

    def upsert_relations(self, relations: Sequence[Relation]) -> None:
        """Create relations, or add supporting chunks to stored ones."""
        rows = [RelationRow.params(r) for r in relations]
        if self._large():
            self._upsert_each(cy.FIND_RELATION, cy.CREATE_RELATION, rows)
        else:
            self._write_batched(cy.UPSERT_RELATIONS, "rows", rows)

    def retire_chunks(
        self, chunk_ids: Sequence[str], keep: Collection[str] = (), incoming: Sequence[str] = ()
    ) -> Retirement:
        """Take what only these (superseded or deleted) chunks supported out of the current graph.

        Their ids leave every relation's support, and a relation left with none is deleted; an entity they named or
        were about that no other current chunk, nor one of ``incoming`` (the uncommitted chunks of the commit being
        written), supports is deleted with its links, unless it is in ``keep`` (entities that text still to be
        written in the same run will name). Written before that commit, while these chunks are still current; the
        chunks themselves stay readable. Retiring the same chunks again changes nothing more.
        """
        ids = list(chunk_ids)
        if not ids:
            return Retirement((), ())
        self._drop_relation_support(ids)
        touched = sorted({row[0] for row in self._write_batched(cy.ENTITIES_OF_CHUNKS, "ids", ids)})
        named = self._still_named(touched, gone=ids, incoming=incoming)
        orphans = [e for e in touched if e not in named and e not in keep]
        self._write_batched(cy.DELETE_ENTITIES, "ids", orphans)
        self._bump_generation()
        return Retirement(tuple(touched), tuple(orphans))

    def entities_of_chunks(self, chunk_ids: Sequence[str]) -> set[str]:
        """The entity records (members of merges too) that these chunks name or are about."""
        return {row[0] for row in self._run_batched(cy.ENTITIES_OF_CHUNKS, "ids", list(chunk_ids))}

    def unlink_chunks(self, chunk_ids: Sequence[str]) -> None:
        """Take these chunks' links out of the graph: their mentions, about links and relation support.

        A relation left with no support is deleted; entities stay (``drop_unnamed_entities`` removes the orphans
        once new links are written). The chunks themselves stay as they are. Unlinking again changes nothing more.
        """
        ids = list(chunk_ids)
        if not ids:
            return
        self._drop_relation_support(ids)
        self._write_batched(cy.DELETE_CHUNK_MENTIONS, "ids", ids)
        self._write_batched(cy.DELETE_CHUNK_ABOUT, "ids", ids)
        self._bump_generation()

    def drop_unnamed_entities(self, entity_ids: Sequence[str]) -> list[str]:
        """Delete those of ``entity_ids`` that no current chunk names (nor names a member of); return them.

        As retiring chunks does: an entity a merged member still needs stays, and deleting again changes nothing.
        """
        ids = sorted(set(entity_ids))
        named = self._still_named(ids)
        orphans = [e for e in ids if e not in named]
        self._write_batched(cy.DELETE_ENTITIES, "ids", orphans)
        if orphans:
            self._bump_generation()
        return orphans

    def _still_named(
        self, entity_ids: Sequence[str], gone: Sequence[str] = (), incoming: Sequence[str] = ()
    ) -> set[str]:
        """Those of ``entity_ids`` (and what they are merged into) that chunks current after the commit name."""
        rows = self._write_batched(cy.STILL_NAMED, "ids", entity_ids, gone=list(gone), incoming=list(incoming))
        return {i for row in rows for i in row if i}

    def _drop_relation_support(self, chunk_ids: list[str]) -> None:
        """Take ``chunk_ids`` out of every relation's support; a relation left with none is deleted."""
        gone = set(chunk_ids)
        trimmed: list[dict[str, Any]] = []
        drop: list[dict[str, Any]] = []
        for rel_id, a_id, b_id, support in self._write_batched(cy.RELATIONS_NEAR_CHUNKS, "ids", chunk_ids):
            left = [c for c in support if c not in gone]
            if len(left) != len(support):
                (trimmed if left else drop).append({"id": rel_id, "a": a_id, "b": b_id, "chunk_ids": left})
        if self._large():
            self._upsert_each(cy.SET_RELATION_SUPPORT_ROW, None, trimmed)
            self._upsert_each(cy.DELETE_RELATION_ROW, None, drop)
        else:
            self._write_batched(cy.SET_RELATION_SUPPORT, "rows", trimmed)
            self._write_batched(cy.DELETE_RELATIONS, "rows", drop)

    def _large(self) -> bool:
        """True when the chunks or the entities are many enough for the links to be written one row a statement.

        Kùzu crosses an ``UNWIND`` with whole node tables (``_upsert_each``): measured here, a relation cost 0.3 ms
        that way with 5,000 entities, 2.3 ms with 20,000 and 6.6 ms with 80,000, against about 1 to 2 ms a row
        one statement at a time, whatever the size.
        """
        return any(self._write(cy.NODE_ROWS.format(table=t))[0][0] >= self.per_row_from for t in ("Chunk", "Entity"))
