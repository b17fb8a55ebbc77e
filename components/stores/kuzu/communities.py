"""``KuzuCommunities``: communities in the Kùzu store (the entity graph, report inputs, the stored hierarchy)."""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.relation import Relation
from agrag.components.stores.kuzu import communities_cypher as cy
from agrag.components.stores.kuzu.ingest_cypher import STORED_ENTITIES
from agrag.components.stores.kuzu.retrieval_reads import KuzuRetrievalReads
from agrag.components.stores.kuzu.rows import CommunityRow, RelationRow, community_params

# Report inputs are read by ranges of ids when a batch asks for at least 1/RANGE_SHARE of the entities, RANGE_IDS
# asked ids a range (``_linked``).
RANGE_SHARE = 20
RANGE_IDS = 20_000


class KuzuCommunities(KuzuRetrievalReads):
    """What community detection and reports read, and the hierarchy they store (replaced as a whole)."""

    # (write count, every community by level, positions of each entity's): see ``_community_index``
    _communities_cache: tuple[int, list[Community], dict[str, tuple[int, ...]]] | None = None

    def entity_graph(self) -> tuple[list[str], list[tuple[str, str, float]]]:
        """The resolved entities joined by relations, each edge weighted by its supporting chunks."""
        edges = [(a, b, float(w or 1)) for a, b, w in self._run(cy.ENTITY_GRAPH_EDGES) if a != b]
        entity_ids = sorted({e for a, b, _ in edges for e in (a, b)})
        return entity_ids, edges

    def community_inputs(
        self, entity_ids: Sequence[str], among: Collection[str] | None = None
    ) -> tuple[list[Entity], list[Relation], list[Chunk], list[tuple[str, str]]]:
        """What community reports are written from: the entities, their relations, and the chunks naming them.

        A relation is kept when its other end is one of ``entity_ids`` (or of ``among``, when given) or merged
        into one of them.
        """
        ids = list(entity_ids)
        entities = self.get_entities(ids)
        asked = set(ids) | self._members_of(ids)
        ends = asked if among is None else asked | set(among) | self._members_of(list(among))
        records = sorted(asked)
        # Why interned: each row brings its own copy of every id, and at 1,000,000 chunks a batch of communities
        # reads millions of relations and mentions naming the same hubs and chunks (about 1 KB a relation read
        # as rows, at 100,000 chunks).
        one = sys.intern
        ranged = len(records) * RANGE_SHARE >= int(self._run(cy.ENTITY_COUNT)[0][0])
        relations: dict[str, Relation] = {}
        for row in self._linked(cy.RELATIONS_FROM, cy.RELATIONS_IN_RANGE, records, ranged=ranged):
            if row[-1] in ends:
                r = RelationRow.read(row)
                relations[r.id] = Relation(
                    r.id,
                    one(r.source_id),
                    one(r.target_id),
                    one(r.type),
                    tuple(map(one, r.chunk_ids)),
                    r.description,
                )
        linked = self._linked(cy.MENTIONS_OF, cy.MENTIONS_IN_RANGE, records, ranged=ranged)
        mentions = sorted({(one(row[0]), one(row[1])) for row in linked})
        chunks = self.get_chunks(sorted({c for c, _ in mentions}))
        return entities, list(relations.values()), chunks, mentions

    def _linked(self, by_ids: str, by_range: str, records: list[str], *, ranged: bool) -> Iterator[list[Any]]:
        """The rows of ``by_ids`` for the sorted, distinct entity ``records``, without the asked id of ``by_range``.

        ``ranged`` (a batch asking for at least 1/``RANGE_SHARE`` of the entities): read ranges of ``RANGE_IDS``
        ids and keep the rows of the ids asked for; else read by id (see ``communities_cypher``).
        """
        if not ranged:
            for batch in self._batches(by_ids, "ids", records):
                yield from batch
            return
        asked = set(records)
        for start in range(0, len(records), RANGE_IDS):
            part = records[start : start + RANGE_IDS]
            yield from (row[:-1] for row in self._run(by_range, {"lo": part[0], "hi": part[-1]}) if row[-1] in asked)

    def replace_communities(self, communities: Sequence[Community]) -> None:
        """Store this hierarchy (with reports) in place of the previous one."""
        self._write(cy.DELETE_COMMUNITIES)
        self._write_batched(cy.UPSERT_COMMUNITIES, "rows", [community_params(k) for k in communities])
        # Into a table emptied just above: one bulk copy, where per-row creates cost about 0.6 ms each.
        # Members that are not stored are left out, as a MATCH would leave them (a copy would refuse them all).
        members = sorted({e for k in communities for e in k.entity_ids})
        stored = {row[0] for row in self._write_batched(STORED_ENTITIES, "ids", members)}
        pairs = [{"from": e, "to": k.id} for k in communities for e in k.entity_ids if e in stored]
        self._copy("IN_COMMUNITY", pairs, relation=True)
        self._bump_generation()

    def communities(self) -> list[Community]:
        """Every stored community with its report, by level."""
        return list(self._community_index()[0])

    def communities_of(self, entity_ids: Sequence[str]) -> list[Community]:
        """The stored communities holding any of these resolved entities, with their reports, by level then id."""
        every, positions = self._community_index()
        return [every[i] for i in sorted({i for e in set(entity_ids) for i in positions.get(e, ())})]

    def _community_index(self) -> tuple[list[Community], dict[str, tuple[int, ...]]]:
        """Every community by level, and the positions of those holding each entity; read once per write count.

        Why: a search that expands to communities asks for those of its entities on every query, and Kùzu reads
        members by a scan of the membership table (about 0.4 s a query at 100,000 chunks), where the hierarchy only
        changes when a write replaces it.
        """
        writes = self._write_count()  # taken before reading: a write after it makes what is read here stale
        cached = self._communities_cache
        if cached is None or cached[0] != writes:
            every = [CommunityRow.read(row) for row in self._run(cy.GET_COMMUNITIES)]
            positions: dict[str, list[int]] = {}
            for position, community in enumerate(every):
                for entity_id in community.entity_ids:
                    positions.setdefault(entity_id, []).append(position)
            cached = self._communities_cache = (writes, every, {e: tuple(p) for e, p in positions.items()})
        return cached[1], cached[2]

    def community_ids_of_documents(self, document_ids: Sequence[str]) -> set[str]:
        """The communities holding an entity that current chunks of these documents name or are about."""
        entity_ids = sorted(self.entity_ids_of_documents(document_ids))
        return {row[0] for row in self._run_batched(cy.COMMUNITIES_OF_ENTITIES, "ids", entity_ids)}
