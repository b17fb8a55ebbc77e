"""``KuzuRetrievalReads``: what retrieval reads from the Kùzu store, over every document (no scope)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity, normalize_name
from agrag.components.data_models.passage_columns import PassageColumns
from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.data_models.passage_names import PassageNames
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolved_entity import MergedEntity
from agrag.components.data_models.traversal_direction import TraversalDirection
from agrag.components.stores.kuzu import retrieval_cypher as cy
from agrag.components.stores.kuzu.arrow_rows import release_arrow_memory
from agrag.components.stores.kuzu.hop_cache import KuzuHopCache
from agrag.components.stores.kuzu.rows import ChunkRow, EntityRow, MergedMemberRow, RelationRow
from agrag.components.stores.kuzu.walks import KuzuWalks

_NAMES_KEPT = 100_000  # names (with their entities' chunk counts) kept between writes by ``passage_names``


class KuzuRetrievalReads(KuzuWalks):
    """Chunks and entities by id, their support, the passage graph, relation walks and name lookups."""

    # (write count, resolved id -> merged records): see ``_every_merged``
    _merged_cache: tuple[int, dict[str, tuple[MergedEntity, ...]]] | None = None
    # (write count, name -> resolved ids current chunks name, resolved id -> chunk count): see ``passage_names``
    _passage_names: tuple[int, dict[str, tuple[str, ...]], dict[str, int]] | None = None
    _first_chunks_cache: KuzuHopCache | None = None  # see ``_first_chunks``

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Return the stored chunks among ``chunk_ids``, in the order asked."""
        rows = self._lookup(cy.GET_CHUNKS, "Chunk", chunk_ids)
        found = {chunk.id: chunk for chunk in map(ChunkRow.read, rows)}
        return [found[i] for i in chunk_ids if i in found]

    def get_entities(self, entity_ids: Sequence[str]) -> list[Entity]:
        """Return the stored entities among ``entity_ids``, in the order asked."""
        rows = self._lookup(cy.GET_ENTITIES, "Entity", entity_ids)
        found = {entity.id: entity for entity in map(EntityRow.read, rows)}
        return [found[i] for i in entity_ids if i in found]

    def supporting_chunk_ids(self, entity_ids: Sequence[str], limit: int | None = None) -> dict[str, list[str]]:
        """Current chunks about or mentioning each entity: chunks about it first, then most mentions, then by id.

        ``limit`` keeps the first that many of each entity (read as such: a hub's thousands are not read).
        """
        asked = sorted(set(entity_ids))
        records = sorted(set(asked) | self._members_of(asked))
        if limit is None:
            params = {"ids": records}
            about, mentions = self._run(cy.ABOUT_CHUNKS, params), self._run(cy.SUPPORTING_CHUNKS, params)
        else:  # each record's first `limit` of each kind hold its resolved entity's first `limit`
            about, mentions = [], []
            for record in records:
                about += self._first_chunks(cy.FIRST_ABOUT_CHUNKS, record, limit)
                mentions += self._first_chunks(cy.FIRST_SUPPORTING_CHUNKS, record, limit)
        ranked: dict[tuple[str, str], tuple[int, int]] = {}
        for entity_id, chunk_id in about:
            ranked[(entity_id, chunk_id)] = (0, 0)
        for entity_id, chunk_id, count in mentions:
            ranked.setdefault((entity_id, chunk_id), (1, -int(count)))
        support: dict[str, list[tuple[tuple[int, int], str]]] = {}
        for (entity_id, chunk_id), order in ranked.items():
            support.setdefault(entity_id, []).append((order, chunk_id))
        return {entity_id: [c for _, c in sorted(pairs)][:limit] for entity_id, pairs in support.items()}

    def _first_chunks(self, statement: str, record: str, limit: int) -> list[list[Any]]:
        """The first ``limit`` rows of ``statement`` for one entity record, kept until the next write.

        A hub is named by tens of thousands of chunks at 1,000,000 chunks, and ranking them took about 150 ms a
        question in GRAPH_EXPAND; the hubs are the entities most questions name.
        """
        writes = self._write_count()  # taken before reading: a write after it makes what is read here stale
        if self._first_chunks_cache is None:
            self._first_chunks_cache = KuzuHopCache(max_items=500_000)
        key = f"{statement}\x00{limit}"
        entry = self._first_chunks_cache.get(writes, key, record)
        if entry is None:
            rows = self._run(statement, {"id": record, "k": limit})
            entry = self._first_chunks_cache.put(writes, key, record, rows, complete=True)
        return [list(row) for row in entry.rows]

    def passage_edges(self) -> PassageEdges:
        """Every (chunk, entity) mention and about link of the current chunks, merged entities as their resolved one.

        ``names`` maps the normalized names of entities (members of a merge included) to resolved entity ids.
        """
        mentions = {(row[0], row[1]) for row in self._run(cy.CURRENT_MENTION_EDGES)}
        about = {(row[0], row[1]) for row in self._run(cy.CURRENT_ABOUT_EDGES)}
        return PassageEdges(tuple(sorted(mentions)), tuple(sorted(about)), self._entity_names())

    def _entity_names(self) -> tuple[tuple[str, str], ...]:
        """(normalized name, resolved entity id) of every entity, members of a merge included, sorted."""
        names = {(row[0], row[1]) for row in [*self._run(cy.CANONICAL_NAMES), *self._run(cy.MEMBER_NAMES)]}
        return tuple(sorted(names))

    def passage_columns(self) -> PassageColumns:
        """``passage_edges`` as numbered columns, read column-wise (what the ppr snapshot is built from)."""
        columns = self._numbered_links()
        # Arrow's allocator keeps what the link tables held (hundreds of MB at 1,000,000 chunks) unless asked: the
        # snapshot is built next, and the process's peak is the sum of both.
        release_arrow_memory()
        return columns

    def _numbered_links(self) -> PassageColumns:
        mentions, about = self._arrow(cy.CURRENT_MENTION_EDGES), self._arrow(cy.CURRENT_ABOUT_EDGES)
        chunk_ids = pc.unique(pa.chunked_array(mentions.column(0).chunks + about.column(0).chunks)).sort()
        entity_ids = pc.unique(pa.chunked_array(mentions.column(1).chunks + about.column(1).chunks)).sort()

        def positions(column: pa.ChunkedArray, values: pa.Array) -> np.ndarray:
            return np.asarray(pc.index_in(column, value_set=values).to_numpy(), dtype=np.int32)

        return PassageColumns(
            chunk_ids.to_pylist(),
            entity_ids.to_pylist(),
            positions(mentions.column(0), chunk_ids),
            positions(mentions.column(1), entity_ids),
            positions(about.column(0), chunk_ids),
            positions(about.column(1), entity_ids),
            self._entity_names(),
        )

    def passage_names(self, names: Sequence[str]) -> PassageNames:
        """What ``PassageGraph`` answers for these names, read for them alone (see ``PassageNames``).

        Why: building the whole passage graph to learn which entities a question names took 7.8 s at 100,000
        chunks, on the first search after every write; this scans the entity names once for the names not asked
        before (20 to 36 ms at 100,000 chunks) and counts each found entity's chunks from its primary key. What was
        read is kept until the next write of this store (at most ``_NAMES_KEPT`` names).
        """
        writes = self._write_count()
        kept = self._passage_names
        if kept is None or kept[0] != writes or len(kept[1]) > _NAMES_KEPT:
            kept = self._passage_names = (writes, {}, {})
        _, ids_by_name, counts = kept
        new = sorted(set(names) - ids_by_name.keys())
        if new:
            found: dict[str, set[str]] = {name: set() for name in new}
            for name, resolved in self._run(cy.NAMED_RECORDS, {"names": new}):
                found[name].add(resolved)
            for resolved in sorted(set().union(*found.values()) - counts.keys()):
                counts[resolved] = self._chunks_naming(resolved)
            ids_by_name.update({name: tuple(sorted(i for i in ids if counts[i] > 0)) for name, ids in found.items()})
        asked = {name: ids_by_name[name] for name in names if ids_by_name.get(name)}
        return PassageNames(asked, {i: counts[i] for ids in asked.values() for i in ids})

    def _chunks_naming(self, resolved: str) -> int:
        """How many current chunks name or are about ``resolved`` or a record merged into it."""
        members = self._members_of([resolved])
        if not members:
            return int(self._run(cy.COUNT_CHUNKS_NAMING, {"id": resolved})[0][0])
        records = (resolved, *sorted(members))
        return len({row[0] for record in records for row in self._run(cy.CHUNKS_NAMING, {"id": record})})

    def relations_of(self, entity_id: str) -> list[Relation]:
        """Return the relations touching an entity, in either direction."""
        relations = {r.id: r for r in map(RelationRow.read, self._run(cy.GET_RELATIONS_OF, {"entity_id": entity_id}))}
        return list(relations.values())

    def entity_ids_of_documents(self, document_ids: Sequence[str]) -> set[str]:
        """The resolved entities that current chunks of these documents name or are about."""
        return {row[0] for row in self._run(cy.ENTITIES_OF_DOCUMENTS, {"ids": list(document_ids)})}

    def entity_records_of_documents(self, document_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(record id, resolved id, normalized name)`` of each entity record the documents' current chunks name.

        A merged entity's members are among them, each with the name those documents use (chunks about a record
        count too).
        """
        rows = self._run(cy.ENTITY_RECORDS_OF_DOCUMENTS, {"ids": list(document_ids)})
        return sorted((record_id, resolved_id, norm_name or "") for record_id, resolved_id, norm_name in rows)

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
        """Walk the relations outward from the seeds, hop by hop; return each relation with the hop that reached it.

        Both ends of a relation are the entities they resolved into. A hop expands only the entities first reached
        by the hop before (the seeds for hop 1), so no entity (a seed least of all) is expanded twice, and no
        relation is returned twice. Within a hop the relations with the most supporting chunks come first (then by
        id); ``per_hop`` keeps that many of them, ``limit`` caps the whole walk.

        Args:
            seed_ids: Entity ids to start from (a merged entity starts from the entity it resolved into).
            relation_types: Only cross relations of these types; None or empty crosses every type.
            direction: ``out`` follows relations from source to target, ``in`` from target to source, ``both`` either.
            depth: Number of hops.
            per_hop: The most relations kept at each hop; None keeps all.
            limit: The most relations in all; None keeps all.

        Raises:
            UnknownTraversalDirectionError: ``direction`` is not ``both``, ``out`` or ``in`` (a ``RetrievalError``).
        """
        hop = cy.TRAVERSE_HOP[TraversalDirection.from_str(direction)]
        frontier = self._canonical_ids(seed_ids)
        rows = self._hops(
            frontier,
            hop,
            extra={},
            relation_types=relation_types,
            depth=depth,
            per_hop=per_hop,
            limit=limit,
        )
        return [(relation, hop) for relation, hop, _ in rows]

    def relation_types_of(self, entity_id: str) -> dict[str, int]:
        """The types of the relations touching an entity (either direction, one hop), with how many of each.

        Most frequent first; an unknown entity has none.
        """
        resolved = self._canonical_ids([entity_id])
        if not resolved:
            return {}
        rows = self._run(cy.RELATION_TYPES_OF, {"entity_id": resolved[0]})
        return {rel_type: int(count) for rel_type, count in sorted(rows, key=lambda r: (-int(r[1]), r[0]))}

    def merged_members(self, entity_ids: Sequence[str]) -> dict[str, list[MergedEntity]]:
        """The entity records merged into each of ``entity_ids``, with the rule of each merge, by name then id.

        Keyed by resolved id; an entity nothing is merged into (or an unknown or merged id) is missing. A record
        with several active log lines (merged again after an undo) shows the latest.
        """
        if not entity_ids:
            return {}
        every = self._every_merged()
        return {key: list(every[key]) for key in dict.fromkeys(entity_ids) if key in every}

    def _every_merged(self) -> dict[str, tuple[MergedEntity, ...]]:
        """Every resolved entity's merged records, read again only when the generation changed.

        Kùzu scans the entity table for a ``merged_into`` match (about 5-10 ms at 50k entities), which an entity
        search would pay on every call; the merges change only with a write of this process, which the write count
        tells without a query (reading the ``generation`` cost 0.4 ms per entity search).
        """
        generation = self._write_count()
        cached = self._merged_cache
        if cached is not None and cached[0] == generation:
            return cached[1]
        latest: dict[str, tuple[str, str, MergedEntity]] = {}
        for resolved_id, log_id, member in map(MergedMemberRow.read, self._run(cy.MERGED_MEMBERS)):
            if member.id not in latest or log_id > latest[member.id][1]:
                latest[member.id] = (resolved_id, log_id, member)
        members: dict[str, list[MergedEntity]] = {}
        for resolved_id, _, member in latest.values():
            members.setdefault(resolved_id, []).append(member)
        every = {key: tuple(sorted(found, key=lambda m: (m.name, m.id))) for key, found in members.items()}
        self._merged_cache = (generation, every)  # one assignment: a reader sees the old pair or the new one
        return every

    def find_entities_by_name(self, name: str, limit: int = 5) -> list[Entity]:
        """The resolved entities whose name normalizes like ``name`` (see ``normalize_name``), by id."""
        norm_name = normalize_name(name)
        if not norm_name or limit <= 0:
            return []
        ids = sorted({row[0] for row in self._run(cy.ENTITIES_BY_NORM_NAME, {"norm_name": norm_name})})
        return self.get_entities(ids[:limit])
