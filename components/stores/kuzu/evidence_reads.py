"""``KuzuEvidenceReads``: the scoped evidence reads of the Kùzu store; each query applies the document scope."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity, normalize_name
from agrag.components.data_models.relation import Relation
from agrag.components.errors import RetrievalError
from agrag.components.stores.kuzu import evidence_cypher as cy
from agrag.components.stores.kuzu.connection import scope_params
from agrag.components.stores.kuzu.rows import ChunkRow, EntityRow
from agrag.components.stores.kuzu.scoped_names import KuzuScopedNames
from agrag.components.stores.kuzu.walks import KuzuWalks


class KuzuEvidenceReads(KuzuScopedNames, KuzuWalks):
    """Chunks, neighbours, spans, documents, entities, support and relation walks, each within a document scope.

    ``scope`` is the document ids that may be read (None: every document); it is applied inside every query, so
    what is out of scope is missing, as an unknown id is, and nothing is read only to be filtered out afterwards.
    """

    def get_chunks_in_scope(self, chunk_ids: Sequence[str], scope: Sequence[str] | None) -> list[Chunk]:
        """Return the stored chunks among ``chunk_ids`` whose document is in ``scope``, in the order asked.

        Current and superseded chunks alike. ``scope`` is the document ids that may be read (None: every document);
        it is applied in the query, so a chunk out of scope is missing, as an unknown id is.
        """
        rows = self._run(cy.GET_CHUNKS_IN_SCOPE, {"ids": list(chunk_ids), **scope_params(scope)})
        found = {chunk.id: chunk for chunk in map(ChunkRow.read, rows)}
        return [found[i] for i in chunk_ids if i in found]

    def chunk_neighbours(self, chunk_id: str, direction: str, scope: Sequence[str] | None) -> list[Chunk]:
        """Return the chunks next to one chunk, in its document version, if its document is in ``scope``.

        Args:
            chunk_id: The chunk to start from (current or superseded); out of scope or unknown, it has no neighbours.
            direction: ``parent`` (the section chunk it was cut from), ``children`` (the chunks cut from it, in
                order), ``siblings`` (the other children of its parent, in order; none without a parent),
                ``previous`` or ``next`` (in reading order).
            scope: Document ids that may be read; None reads every document. Applied in the query.

        Raises:
            RetrievalError: ``direction`` is not one of the above.
        """
        query = cy.CHUNK_NEIGHBOURS.get(direction)
        if query is None:
            raise RetrievalError(
                f"Unknown chunk direction {direction!r}. Use one of: {', '.join(cy.CHUNK_NEIGHBOURS)}."
            )
        return [ChunkRow.read(row) for row in self._run(query, {"id": chunk_id, **scope_params(scope)})]

    def version_chunks_overlapping(
        self, document_id: str, version: str, start: int, end: int, scope: Sequence[str] | None
    ) -> list[Chunk]:
        """Return the chunks of one document version whose span overlaps the characters ``[start, end)``.

        Spans are half-open: a chunk that ends where the range starts (or starts where it ends) does not overlap.
        Section and text chunks alike, ordered by start offset, then order. Empty if the document is out of
        ``scope`` (document ids that may be read; None reads every document), applied in the query.
        """
        params = {"document_id": document_id, "version": version, "span_start": int(start), "span_end": int(end)}
        rows = self._run(cy.VERSION_CHUNKS_OVERLAPPING, {**params, **scope_params(scope)})
        return [ChunkRow.read(row) for row in rows]

    def document_version_info(
        self, document_ids: Sequence[str], scope: Sequence[str] | None
    ) -> dict[str, tuple[str, str]]:
        """Return ``(current version, title)`` of each known document among ``document_ids`` that is in ``scope``.

        The version is ``''`` for a deleted document (and for one whose first ingest has not finished). ``scope``
        is the document ids that may be read (None: every document), applied in the query: a document out of scope
        is missing, as an unknown one is.
        """
        rows = self._run(cy.DOCUMENT_VERSION_INFO, {"ids": list(document_ids), **scope_params(scope)})
        return {doc_id: (version or "", title or "") for doc_id, version, title in rows}

    def visible_entities(self, entity_ids: Sequence[str], scope: Sequence[str] | None) -> list[Entity]:
        """Return the resolved entities among ``entity_ids`` that a current chunk in ``scope`` names or is about.

        A merged entity's id stands for the entity it resolved into, and the chunks naming or about its members count
        for it. Each resolved entity comes once, where it was first asked for. Within a scope, its name, label and
        description come from the in-scope text only (see ``_named_in_scope``). An entity no current chunk of a
        document in ``scope`` (document ids that may be read; None: every document) names is missing, as an unknown
        id is; the scope is applied in the query.
        """
        rows = self._run(cy.VISIBLE_ENTITIES, {"ids": list(entity_ids), **scope_params(scope)})
        found = {asked: EntityRow.read(entity) for asked, *entity in rows}
        if scope is not None:
            named = self._named_in_scope(sorted({e.id for e in found.values()}), scope)
            found = {asked: named[e.id] for asked, e in found.items() if e.id in named}
        visible: dict[str, Entity] = {}
        for asked in entity_ids:
            if asked in found:
                visible.setdefault(found[asked].id, found[asked])
        return list(visible.values())

    def entities_named_in_scope(self, name: str, scope: Sequence[str] | None, limit: int = 5) -> list[Entity]:
        """The resolved entities with a record of this (normalized) name that a current in-scope chunk names.

        As ``visible_entities`` shows them; a name only documents outside the scope use finds nothing.
        """
        norm_name = normalize_name(name)
        if not norm_name or limit <= 0:
            return []
        rows = self._run(cy.NAMED_IN_SCOPE, {"norm_name": norm_name, **scope_params(scope)})
        return self.visible_entities(sorted({row[0] for row in rows})[:limit], scope)

    def entity_support_in_scope(
        self, entity_ids: Sequence[str], scope: Sequence[str] | None, per_entity: int = 3
    ) -> dict[str, list[str]]:
        """The current chunks in ``scope`` about or mentioning each entity: at most ``per_entity``, best first.

        Keyed by resolved entity (a merged entity's id counts as the entity it resolved into, and its members'
        chunks count for it), in id order. Chunks about the entity come first, then those naming it most often
        (its members' mentions added up), then by id, as in ``supporting_chunk_ids``. An entity with no such chunk
        is missing. ``scope`` is the document ids that may be read (None: every document), applied in the query.
        """
        rows = self._run(cy.SUPPORT_IN_SCOPE, {"ids": list(entity_ids), **scope_params(scope)})
        support: dict[str, list[str]] = {}
        for entity_id, chunk_id in rows:
            chunks = support.setdefault(entity_id, [])
            if len(chunks) < per_entity:
                chunks.append(chunk_id)
        return {entity_id: chunks for entity_id, chunks in support.items() if chunks}

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
        """Walk the relations outward from the seeds within a document scope, as ``traverse`` does in both directions.

        Returns each relation crossed (both ends resolved, all its chunk ids), the hop that reached it, and its chunk
        ids that are current and in scope, sorted: none when all of those were superseded (the relation is then only
        a path between the entities, not an assertion a current text makes).

        Within a scope, everything is decided in the query: a relation is crossed only if every one of its chunk ids
        is a stored chunk of an in-scope document (of any version), so a relation an out-of-scope document (or a
        chunk id of no stored chunk) contributed to is not even shown to exist, and only if both its ends are
        visible (see ``visible_entities``); seeds that are not visible start nothing. With ``scope`` None every
        relation with a chunk id is crossed, and the seeds are every stored entity asked for. A relation without
        chunk ids is never crossed.

        No entity is expanded twice and no relation returned twice. Within a hop the relations with the most
        current in-scope chunks come first, then those with the most chunk ids, then by id.

        Args:
            seed_ids: Entity ids to start from (a merged entity starts from the entity it resolved into).
            scope: Document ids that may be read; None reads every document.
            relation_types: Only cross relations of these types; None or empty crosses every type.
            depth: Number of hops.
            per_hop: The most relations kept at each hop; None keeps all.
            limit: The most relations in all; None keeps all.
        """
        in_scope = scope_params(scope)
        if scope is None:
            frontier, query = self._canonical_ids(seed_ids), cy.SCOPED_HOP["all"]
        else:
            frontier, query = [e.id for e in self.visible_entities(seed_ids, scope)], cy.SCOPED_HOP["scoped"]
        return self._hops(
            frontier,
            query,
            extra=in_scope,
            relation_types=relation_types,
            depth=depth,
            per_hop=per_hop,
            limit=limit,
        )
