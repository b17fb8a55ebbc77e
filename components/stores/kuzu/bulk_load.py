"""``KuzuBulkLoad``: a first ingestion written into an empty graph by bulk ``COPY``, in one transaction.

Kùzu 0.11.3 plans ``UNWIND $rows ... MATCH (a:Entity {id: r.a})`` as a scan of the whole node table crossed with
the rows, so each merge of a relation or a mention costs time in proportion to the entities already stored
(measured here: 0.3 ms a relation with 5,000 entities, 6.6 ms with 80,000), and an ingestion grows with the square
of its size. ``COPY`` looks the ends up in the primary-key index (about 0.01 ms a row) but only into an empty table:
into a table of 300,000 relations, copying 2,000 more took 2 s and 100,000 more 46 s. So the one write that gets
the fast path is the one that matters most for a large corpus: the first, into an empty data dir.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.graph_load import GraphLoad
from agrag.components.data_models.relation import Relation
from agrag.components.errors import StoreError
from agrag.components.stores.kuzu import ingest_cypher as cy
from agrag.components.stores.kuzu.connection import KuzuConnection
from agrag.components.stores.kuzu.rows import ChunkRow, DocumentRow, EntityRow

# The tables a bulk load fills: each must be empty before it (a copy into a non-empty table is slow, and a node
# copy fails on a key that is stored already).
LOADED_NODES = ("Document", "Chunk", "Entity")


class KuzuBulkLoad(KuzuConnection):
    """The bulk first load of the graph (see the module docstring)."""

    def graph_is_empty(self) -> bool:
        """True when no document, chunk or entity is stored: a bulk load may write this graph."""
        return not any(self._run(cy.ANY_NODE.format(table=table)) for table in LOADED_NODES)

    def bulk_load(self, load: GraphLoad) -> None:
        """Write ``load`` into the empty graph by bulk copies, inside the caller's ``transaction()``.

        Writes what ``write_chunks``, ``upsert_entities``, the link upserts and ``upsert_relations`` would, for
        new rows: the documents (uncommitted until ``commit_documents``), their chunks (current), ``HAS_CHUNK``,
        ``NEXT`` and ``PARENT``, the entities, mentions, about links and relations. As the merges do, a link or
        relation whose end is not among the rows is left out, and repeated links are written once.

        Raises:
            StoreError: the graph is not empty, or no transaction is open (an internal error).
        """
        if not self.in_transaction:
            raise StoreError("Internal error: a bulk load runs inside the store's transaction().")
        if not self.graph_is_empty():
            raise StoreError("Internal error: a bulk load needs an empty graph; this one holds documents already.")
        documents = {d.id: d for d in load.documents}
        chunk_ids = {c.id for c in load.chunks}
        entity_ids = {e.id for e in load.entities}
        self._copy(
            "Document",
            [DocumentRow.params(d, version="", chunk_count=0, config_hash="", plan="") for d in documents.values()],
        )
        self._copy("Chunk", [ChunkRow.params(c, current=True) for c in load.chunks])
        owned = [(c.document_id, c.id) for c in load.chunks if c.document_id in documents]
        self._copy_columns("HAS_CHUNK", _pairs(owned), relation=True)
        self._copy_columns("NEXT", _pairs(_next_pairs(load.chunks)), relation=True)
        parents = [(c.id, c.parent_id) for c in load.chunks if c.parent_id is not None and c.parent_id in chunk_ids]
        self._copy_columns("PARENT", _pairs(parents), relation=True)
        self._copy("Entity", [EntityRow.params(e, merged_into="") for e in _unique(load.entities)])
        # links and relations as columns: at 1,000,000 chunks a dict per row was gigabytes (11.7 million mentions)
        mentions = {(m.chunk_id, m.entity_id): m.count for m in load.mentions}
        self._copy_columns("MENTIONS", _links(mentions, chunk_ids, entity_ids, count=True), relation=True)
        del mentions
        about = dict.fromkeys((m.chunk_id, m.entity_id) for m in load.about)
        self._copy_columns("ABOUT", _links(about, chunk_ids, entity_ids, count=False), relation=True)
        self._copy_columns("RELATED", _relation_columns(load.relations, entity_ids), relation=True)


def _unique(items: Sequence[Any]) -> list[Any]:
    """The first item of each id (a node copy fails on a repeated key; the merge keeps the first one stored)."""
    first: dict[str, Any] = {}
    for item in items:
        first.setdefault(item.id, item)
    return list(first.values())


def _pairs(pairs: Sequence[tuple[str, str]]) -> dict[str, list[Any]]:
    """(from, to) pairs as the two end columns of a relation table."""
    return {"from": [a for a, _ in pairs], "to": [b for _, b in pairs]}


def _next_pairs(chunks: Sequence[Chunk]) -> list[tuple[str, str]]:
    by_document: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_document.setdefault(chunk.document_id, []).append(chunk)
    return [(a.id, b.id) for group in by_document.values() for a, b in pairwise(sorted(group, key=lambda c: c.order))]


def _links(
    links: dict[tuple[str, str], Any], chunk_ids: set[str], entity_ids: set[str], *, count: bool
) -> dict[str, list[Any]]:
    """The links whose ends are both written, as columns (with their ``count`` when asked)."""
    sources: list[Any] = []
    targets: list[Any] = []
    counts: list[Any] = []
    for (chunk, entity), n in links.items():
        if chunk in chunk_ids and entity in entity_ids:
            sources.append(chunk)
            targets.append(entity)
            counts.append(n)
    columns = {"from": sources, "to": targets}
    if count:
        columns["count"] = counts
    return columns


def _relation_columns(relations: Sequence[Relation], entity_ids: set[str]) -> dict[str, list[Any]]:
    """One row per relation id, its support the union of its entries' (as the merge adds support up), as columns."""
    first: dict[str, Relation] = {}
    support: dict[str, set[str]] = {}  # only ids with two entries or more: a set is 216 bytes, millions of them
    for relation in relations:
        if relation.source_id not in entity_ids or relation.target_id not in entity_ids:
            continue
        seen = first.setdefault(relation.id, relation)
        if seen is not relation:
            support.setdefault(relation.id, set(seen.chunk_ids)).update(relation.chunk_ids)
    kept = list(first.values())
    del first
    return {
        "from": [r.source_id for r in kept],
        "to": [r.target_id for r in kept],
        "id": [r.id for r in kept],
        "type": [r.type for r in kept],
        "description": [r.description for r in kept],
        "chunk_ids": [sorted(support.pop(r.id) if r.id in support else set(r.chunk_ids)) for r in kept],
    }
