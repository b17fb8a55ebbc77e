"""``KuzuGraphStore``: the graph in an embedded Kùzu database file. The only module that imports ``kuzu``."""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import kuzu

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community, CommunityReport, Finding
from agrag.components.data_models.document import Document
from agrag.components.data_models.document_structure import TableCell
from agrag.components.data_models.entity import Entity, normalize_name
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import MERGED, MergeDecision, MergeLogEntry, ResolutionCandidate
from agrag.components.data_models.retirement import Retirement
from agrag.components.errors import DocumentNotFoundError, MergeNotFoundError, StoreError, StoreLockedError
from agrag.components.stores import kuzu_cypher as cy
from agrag.components.stores.graph_store import GENERATION_KEY

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
# Kùzu copies every row of an UNWIND list into one transaction; batches keep memory flat on large folders.
_BATCH = 2000


def _chunk_from_row(r: Sequence[Any]) -> Chunk:
    cells = tuple(TableCell(*cell) for cell in json.loads(r[11])) if r[11] else ()
    return Chunk(
        id=r[0],
        document_id=r[1],
        document_version=r[2],
        text=r[3],
        heading_path=tuple(r[4]),
        order=r[5],
        start=r[6],
        end=r[7],
        parent_id=r[8] or None,
        title=r[9],
        kind=r[10] or "text",
        cells=cells,
        current=bool(r[12]),
    )


class KuzuGraphStore:
    """Documents, chunks, entities and relations in one Kùzu database file.

    Kùzu allows one read-write database per file per process and one process per file; a second process gets a
    ``StoreLockedError``. Calls are serialized on one connection, so the store can be shared between threads.

    Usage:
        ```python
        store = KuzuGraphStore(Path(".agrag/graph.kuzu"))
        print(store.counts())
        store.close()
        ```
    """

    def __init__(self, path: Path) -> None:
        self._path = Path(path)
        self._lock = threading.Lock()
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._db = kuzu.Database(str(self._path))
            self._conn = kuzu.Connection(self._db)
        except RuntimeError as exc:
            if "lock" in str(exc).lower():
                raise StoreLockedError(
                    f"The graph store {self._path} is in use by another process. Stop the other agrag process "
                    "(ingest or server) or point AGRAG_DATA_DIR elsewhere."
                ) from exc
            raise StoreError(f"Could not open the Kùzu database {self._path}: {exc}") from exc
        for statement in cy.SCHEMA:
            self._run(statement)

    def _run(self, query: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        given = dict(params or {})
        missing = set(_PARAM.findall(query)) - given.keys()
        if missing:  # an unbound $param can crash the Kùzu process instead of raising
            raise StoreError(f"Internal error: Cypher parameters {sorted(missing)} are not bound.")
        try:
            with self._lock:
                result = self._conn.execute(query, given)
                rows = result.get_all() if isinstance(result, kuzu.QueryResult) else []
        except RuntimeError as exc:
            raise StoreError(f"Kùzu query failed on {self._path}: {exc}") from exc
        return [list(row) for row in rows]

    def _run_batched(self, query: str, key: str, rows: Sequence[Any], **extra: Any) -> list[list[Any]]:
        returned: list[list[Any]] = []
        for start in range(0, len(rows), _BATCH):
            returned += self._run(query, {key: list(rows[start : start + _BATCH]), **extra})
        return returned

    def info(self) -> dict[str, str]:
        """Facts about the data dir recorded at first ingest (for example the embedding model)."""
        return {key: value for key, value in self._run(cy.GET_INFO)}

    def set_info(self, values: Mapping[str, str]) -> None:
        """Record facts about the data dir."""
        for key, value in values.items():
            self._run(cy.SET_INFO, {"key": key, "value": value})

    def document_versions(self, document_ids: Sequence[str]) -> dict[str, str]:
        """Return the current version of each known document."""
        rows = self._run(cy.DOCUMENT_VERSIONS, {"ids": list(document_ids)})
        return {doc_id: version for doc_id, version in rows}

    def write_chunks(self, documents: Sequence[Document], chunks: Sequence[Chunk]) -> list[str]:
        """Store the chunks of document versions and their links; mark other versions' chunks superseded."""
        rows = [
            {
                "id": c.id,
                "document_id": c.document_id,
                "document_version": c.document_version,
                "title": c.title,
                "text": c.text,
                "heading_path": list(c.heading_path),
                "ord": c.order,
                "start_offset": c.start,
                "end_offset": c.end,
                "parent_id": c.parent_id or "",
                "kind": c.kind,
                "cells": json.dumps([[x.row, x.column, x.start, x.end] for x in c.cells]) if c.cells else "",
            }
            for c in chunks
        ]
        self._run_batched(cy.UPSERT_CHUNKS, "rows", rows)
        self._run_batched(
            cy.LINK_DOCUMENT_CHUNKS, "pairs", [{"document_id": c.document_id, "chunk_id": c.id} for c in chunks]
        )
        by_document: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_document.setdefault(chunk.document_id, []).append(chunk)
        next_pairs = [
            {"a": a.id, "b": b.id}
            for group in by_document.values()
            for a, b in pairwise(sorted(group, key=lambda c: c.order))
        ]
        self._run_batched(cy.LINK_NEXT, "pairs", next_pairs)
        self._run_batched(cy.LINK_PARENT, "pairs", [{"a": c.id, "b": c.parent_id} for c in chunks if c.parent_id])
        versions = [{"id": d.id, "version": d.version} for d in documents]
        return [row[0] for row in self._run_batched(cy.SUPERSEDE_CHUNKS, "rows", versions)]

    def document_config_hashes(self, document_ids: Sequence[str]) -> dict[str, str]:
        """Return the hash of the settings each known document was ingested with ('' if not recorded)."""
        return {doc_id: h or "" for doc_id, h in self._run(cy.DOCUMENT_CONFIG_HASHES, {"ids": list(document_ids)})}

    def commit_documents(self, documents: Sequence[tuple[Document, int]], config_hash: str = "") -> None:
        """Record each document version (with its chunk count) as current and fully written.

        ``config_hash`` names the settings it was ingested with. Also records a new ``generation``, so readers that
        cache the graph know it changed.
        """
        rows = [
            {
                "id": d.id,
                "version": d.version,
                "title": d.title,
                "source_path": d.source_path,
                "chunk_count": count,
                "config_hash": config_hash,
            }
            for d, count in documents
        ]
        self._run_batched(cy.UPSERT_DOCUMENTS, "rows", rows)
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})

    def existing_entity_ids(self, entity_ids: Sequence[str]) -> set[str]:
        """Return which of ``entity_ids`` are stored."""
        return {row[0] for row in self._run(cy.EXISTING_ENTITIES, {"ids": list(entity_ids)})}

    def upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Create the entities not yet stored; stored entities keep their name, label and description."""
        rows = [
            {
                "id": e.id,
                "name": e.name,
                "norm_name": normalize_name(e.name),
                "label": e.label,
                "description": e.description,
            }
            for e in entities
        ]
        self._run_batched(cy.UPSERT_ENTITIES, "rows", rows)

    def upsert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Link chunks to the entities they name."""
        rows = [{"chunk_id": m.chunk_id, "entity_id": m.entity_id, "count": m.count} for m in mentions]
        self._run_batched(cy.UPSERT_MENTIONS, "rows", rows)

    def upsert_about(self, about: Sequence[Mention]) -> None:
        """Link chunks to the entities they are about."""
        rows = [{"chunk_id": m.chunk_id, "entity_id": m.entity_id} for m in about]
        self._run_batched(cy.UPSERT_ABOUT, "rows", rows)

    def passage_edges(self) -> PassageEdges:
        """Every (chunk, entity) mention and about link of the current chunks, merged entities as their resolved one.

        ``names`` maps the normalized names of entities (members of a merge included) to resolved entity ids.
        """
        mentions = {(row[0], row[1]) for row in self._run(cy.CURRENT_MENTION_EDGES)}
        about = {(row[0], row[1]) for row in self._run(cy.CURRENT_ABOUT_EDGES)}
        names = {(row[0], row[1]) for row in [*self._run(cy.CANONICAL_NAMES), *self._run(cy.MEMBER_NAMES)]}
        return PassageEdges(tuple(sorted(mentions)), tuple(sorted(about)), tuple(sorted(names)))

    def upsert_relations(self, relations: Sequence[Relation]) -> None:
        """Create relations, or add supporting chunks to stored ones."""
        rows = [
            {
                "id": r.id,
                "source_id": r.source_id,
                "target_id": r.target_id,
                "type": r.type,
                "description": r.description,
                "chunk_ids": sorted(r.chunk_ids),
            }
            for r in relations
        ]
        self._run_batched(cy.UPSERT_RELATIONS, "rows", rows)

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Return the stored chunks among ``chunk_ids``, in the order asked."""
        rows = self._run(cy.GET_CHUNKS, {"ids": list(chunk_ids)})
        found = {r[0]: _chunk_from_row(r) for r in rows}
        return [found[i] for i in chunk_ids if i in found]

    def get_entities(self, entity_ids: Sequence[str]) -> list[Entity]:
        """Return the stored entities among ``entity_ids``, in the order asked."""
        rows = self._run(cy.GET_ENTITIES, {"ids": list(entity_ids)})
        found = {r[0]: Entity(id=r[0], name=r[1], label=r[2], description=r[3]) for r in rows}
        return [found[i] for i in entity_ids if i in found]

    def supporting_chunk_ids(self, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        """Current chunks about or mentioning each entity: chunks about it first, then most mentions, then by id."""
        params = {"ids": list(entity_ids)}
        ranked: dict[tuple[str, str], tuple[int, int]] = {}
        for entity_id, chunk_id in self._run(cy.ABOUT_CHUNKS, params):
            ranked[(entity_id, chunk_id)] = (0, 0)
        for entity_id, chunk_id, count in self._run(cy.SUPPORTING_CHUNKS, params):
            ranked.setdefault((entity_id, chunk_id), (1, -int(count)))
        support: dict[str, list[tuple[tuple[int, int], str]]] = {}
        for (entity_id, chunk_id), order in ranked.items():
            support.setdefault(entity_id, []).append((order, chunk_id))
        return {entity_id: [c for _, c in sorted(pairs)] for entity_id, pairs in support.items()}

    def relations_of(self, entity_id: str) -> list[Relation]:
        """Return the relations touching an entity, in either direction."""
        rows = self._run(cy.GET_RELATIONS_OF, {"entity_id": entity_id})
        relations: dict[str, Relation] = {}
        for rel_id, rel_type, description, chunk_ids, a_id, b_id in rows:
            relations[rel_id] = Relation(rel_id, a_id, b_id, rel_type, tuple(chunk_ids), description)
        return list(relations.values())

    def retire_chunks(self, chunk_ids: Sequence[str]) -> Retirement:
        """Take what only these (superseded or deleted) chunks supported out of the current graph.

        Their ids leave every relation's support, and a relation left with none is deleted; an entity they named or
        were about that no current chunk supports any more is deleted with its links. The chunks themselves stay
        readable. Retiring the same chunks again changes nothing more.
        """
        ids = list(chunk_ids)
        if not ids:
            return Retirement((), ())
        retired = set(ids)
        keep: list[dict[str, Any]] = []
        drop: list[dict[str, Any]] = []
        for rel_id, a_id, b_id, support in self._run_batched(cy.RELATIONS_NEAR_CHUNKS, "ids", ids):
            left = [c for c in support if c not in retired]
            if len(left) != len(support):
                (keep if left else drop).append({"id": rel_id, "a": a_id, "b": b_id, "chunk_ids": left})
        self._run_batched(cy.SET_RELATION_SUPPORT, "rows", keep)
        self._run_batched(cy.DELETE_RELATIONS, "rows", drop)
        touched = sorted({row[0] for row in self._run_batched(cy.ENTITIES_OF_CHUNKS, "ids", ids)})
        named = {i for row in self._run_batched(cy.STILL_NAMED, "ids", touched) for i in row if i}
        orphans = [e for e in touched if e not in named]
        self._run_batched(cy.DELETE_ENTITIES, "ids", orphans)
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})
        return Retirement(tuple(touched), tuple(orphans))

    def document_chunk_ids(self, document_id: str, version: str | None = None) -> list[str]:
        """The ids of a document's chunks, of every version or of one, in document order."""
        rows = self._run(cy.CHUNK_IDS_OF_DOCUMENT, {"id": document_id})
        return [chunk_id for chunk_id, chunk_version, _ in rows if version is None or chunk_version == version]

    def delete_document(self, document_id: str) -> list[str]:
        """Mark a document deleted and its chunks no longer current; return every chunk id of it, to retire.

        Its chunks stay readable by id (as superseded text). Deleting it again repeats the retirement, which is
        idempotent, so a delete that was killed half-way completes. Raises ``DocumentNotFoundError`` for an
        unknown id.
        """
        if not self._run(cy.MARK_DOCUMENT_DELETED, {"id": document_id}):
            raise DocumentNotFoundError(document_id)
        return [row[0] for row in self._run(cy.CHUNKS_OF_DELETED_DOCUMENT, {"id": document_id})]

    def canonical_entities(self) -> list[Entity]:
        """Every stored entity that is not merged into another: what new entities may resolve into."""
        rows = self._run(cy.CANONICAL_ENTITIES)
        return [Entity(id=r[0], name=r[1], label=r[2], description=r[3]) for r in sorted(rows)]

    def apply_resolution(
        self, decisions: Sequence[MergeDecision], candidates: Sequence[ResolutionCandidate], run_id: str
    ) -> None:
        """Record merges as pointers (``merged`` decisions), log every decision, and keep the near misses."""
        merges = [{"member_id": d.member_id, "resolved_id": d.resolved_id} for d in decisions if d.decision == MERGED]
        self._run_batched(cy.SET_MERGED_INTO, "rows", merges)
        self._run_batched(cy.FOLLOW_MERGES, "rows", merges)
        log = [
            {
                "id": f"{run_id}-{index:05d}",
                "member_id": d.member_id,
                "resolved_id": d.resolved_id,
                "decision": d.decision,
                "rule": d.rule,
                "score": float(d.score),
                "reason": d.reason,
                "run_id": run_id,
            }
            for index, d in enumerate(decisions)
        ]
        self._run_batched(cy.UPSERT_MERGE_LOG, "rows", log)
        merged_ids = [d.member_id for d in decisions if d.decision == MERGED]
        self._run_batched(cy.DELETE_CANDIDATES_OF, "ids", merged_ids)
        rows = [
            {
                "id": "|".join(sorted((c.entity_id, c.other_id))),
                "entity_id": c.entity_id,
                "other_id": c.other_id,
                "name": c.name,
                "other_name": c.other_name,
                "score": float(c.score),
                "rule": c.rule,
            }
            for c in candidates
        ]
        self._run_batched(cy.UPSERT_CANDIDATES, "rows", rows)
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})

    def merge_log(self) -> list[MergeLogEntry]:
        """Every resolution decision, oldest run first, with the names of both entities."""
        return [
            MergeLogEntry(r[0], r[1], r[2], r[3], r[4], float(r[5]), r[6], bool(r[7]), r[8] or "", r[9] or "")
            for r in self._run(cy.GET_MERGE_LOG)
        ]

    def undo_merge(self, key: str) -> list[MergeLogEntry]:
        """Undo the active merge with this log id, or every active merge of the entity with this id.

        The member entity gets back its own mentions, relations and search point; the log keeps the line, marked
        undone. Returns the lines undone.

        Raises:
            MergeNotFoundError: no active merge has this log id or member id.
        """
        rows = self._run(cy.ACTIVE_MERGES_OF, {"id": key})
        if not rows:
            raise MergeNotFoundError(key)
        for log_id, _, _ in rows:
            self._run(cy.UNDO_MERGE, {"log_id": log_id})
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})
        undone = {row[0] for row in rows}
        return [entry for entry in self.merge_log() if entry.id in undone]

    def candidates(self) -> list[ResolutionCandidate]:
        """The near misses of entity resolution, most similar first."""
        return [ResolutionCandidate(r[0], r[1], r[2], r[3], float(r[4]), r[5]) for r in self._run(cy.GET_CANDIDATES)]

    def entity_graph(self) -> tuple[list[str], list[tuple[str, str, float]]]:
        """The resolved entities joined by relations, each edge weighted by its supporting chunks."""
        edges = [(a, b, float(w or 1)) for a, b, w in self._run(cy.ENTITY_GRAPH_EDGES) if a != b]
        entity_ids = sorted({e for a, b, _ in edges for e in (a, b)})
        return entity_ids, edges

    def community_inputs(
        self, entity_ids: Sequence[str]
    ) -> tuple[list[Entity], list[Relation], list[Chunk], list[tuple[str, str]]]:
        """What community reports are written from: the entities, their relations, and the chunks naming them."""
        ids = list(entity_ids)
        entities = self.get_entities(ids)
        relations = {
            r[0]: Relation(r[0], r[4], r[5], r[1], tuple(r[3]), r[2])
            for r in self._run_batched(cy.RELATIONS_AMONG, "ids", ids)
        }
        mentions = sorted({(row[0], row[1]) for row in self._run_batched(cy.MENTIONS_OF, "ids", ids)})
        chunks = self.get_chunks(sorted({c for c, _ in mentions}))
        return entities, list(relations.values()), chunks, mentions

    def replace_communities(self, communities: Sequence[Community]) -> None:
        """Store this hierarchy (with reports) in place of the previous one."""
        self._run(cy.DELETE_COMMUNITIES)
        rows = [
            {
                "id": k.id,
                "level": k.level,
                "parent_id": k.parent_id or "",
                "size": len(k.entity_ids),
                "title": k.report.title if k.report else "",
                "summary": k.report.summary if k.report else "",
                "rating": float(k.report.rating) if k.report else 0.0,
                "findings": json.dumps([[f.summary, f.explanation] for f in k.report.findings]) if k.report else "[]",
                "method": k.report.method if k.report else "",
            }
            for k in communities
        ]
        self._run_batched(cy.UPSERT_COMMUNITIES, "rows", rows)
        pairs = [{"entity_id": e, "community_id": k.id} for k in communities for e in k.entity_ids]
        self._run_batched(cy.LINK_COMMUNITY_MEMBERS, "pairs", pairs)
        self.set_info({GENERATION_KEY: uuid.uuid4().hex})

    def communities(self) -> list[Community]:
        """Every stored community with its report, by level."""
        found = []
        for cid, level, parent, title, summary, rating, findings, method, members in self._run(cy.GET_COMMUNITIES):
            report = None
            if method:
                parsed = [Finding(a, b) for a, b in json.loads(findings or "[]")]
                report = CommunityReport(title, summary, float(rating), tuple(parsed), method)
            found.append(Community(cid, int(level), tuple(sorted(m for m in members if m)), parent or None, report))
        return found

    def counts(self) -> dict[str, int]:
        """Return the number of rows of every node and relationship table."""
        counts = {table: int(self._run(cy.count_nodes(table))[0][0]) for table in cy.NODE_TABLES}
        counts.update({table: int(self._run(cy.count_rels(table))[0][0]) for table in cy.REL_TABLES})
        return counts

    def close(self) -> None:
        """Release the database file and its lock."""
        with self._lock:
            self._conn.close()
            self._db.close()
