"""``QdrantEntityRetriever``: the ``entity`` method, entities the query names, then by meaning and name words."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack import component

from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.resolved_entity import with_merged
from agrag.components.data_models.retrieval_method import RetrievalMethod
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.errors import RetrievalError
from agrag.components.graph.passage_graph_cache import PassageGraphCache
from agrag.components.retrievers.filter_conditions import IdsOfDocuments, payload_filter_for
from agrag.components.retrievers.guarded_run import guarded_run
from agrag.components.retrievers.query_names import (
    candidate_names,
    query_entity_ids,
    query_name_groups,
    rarest_names_first,
)
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.store_backed import StoreBacked
from agrag.components.stores.store_ref import StoreRef, entities_part, graph_part
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_payloads import entity_from_payload
from agrag.components.stores.vector_store import (
    MERGED_STATUS,
    PENDING,
    STATUS_FIELD,
    PayloadFilter,
    VectorCollection,
    VectorHit,
    VectorStore,
)

# Entities merged into another keep their point for an undo, but only resolved entities are found, and none whose
# commit has not finished (pending). An exclusion, not `status = current`, so entity points written before the status
# field existed are still found.
RESOLVED_ONLY = PayloadFilter().and_not(STATUS_FIELD, (MERGED_STATUS, PENDING))


@component
class QdrantEntityRetriever(StoreBacked):
    """Finds entities whose name and description are closest to the query (dense leg) or share its words (BM25).

    With ``names`` (the graph snapshot), the entities whose whole name appears in the query come first: "Who is
    the spouse of the Green performer?" names the album *Green*, which a similarity search of the whole question
    can rank below entities that merely share its words. The rarest name comes first (fewest passages naming it,
    then the query's order), so in "Which singer is American, Mark King or Nick Hexum?" the two singers lead and
    *American* follows. They pass the same filters, inside the same store query, as every other hit.

    A failure is reported in ``status`` and gives no results, so the other methods of a recipe still return.
    Built from open stores or from a ``StoreSpec`` (opened in ``warm_up``), it serializes as the spec.

    Usage:
        ```python
        retriever = QdrantEntityRetriever(store.entities, top_k=10)
        out = retriever.run(query="Orion Planner", query_embedding=vector)
        ```
    """

    def __init__(
        self,
        store: VectorStore | StoreSpec,
        top_k: int = 10,
        method: RetrievalMethod | str = RetrievalMethod.ENTITY,
        ids_of_documents: IdsOfDocuments | StoreSpec | None = None,
        names: PassageGraphCache | None = None,
        *,
        graph: GraphStore | StoreSpec | None = None,
    ) -> None:
        """Search ``store`` (the entities collection); ``ids_of_documents`` serves ``document_ids`` filters.

        With ``graph``, a search under ``document_ids`` names each entity as those documents do (a merged entity's
        name, label and description from the in-scope records of its cluster only); without it, such a search fails.
        ``store``, ``ids_of_documents`` and ``graph`` may each be a ``StoreSpec``: the entities collection,
        ``graph.entity_ids_of_documents`` and the graph of the data dir it names.
        """
        self._store = StoreRef(store, entities_part)
        self.top_k = top_k
        self.method = RetrievalMethod.from_str(method)
        self._ids = None if ids_of_documents is None else StoreRef(ids_of_documents, _entity_ids)
        self.names = names
        self._graph = None if graph is None else StoreRef(graph, graph_part)

    @property
    def store(self) -> VectorStore:
        """The entities collection (opened from its spec on first use)."""
        return self._store.get()

    @property
    def ids_of_documents(self) -> IdsOfDocuments | None:
        """The entities of some documents, for ``document_ids`` filters, if given."""
        return None if self._ids is None else self._ids.get()

    @property
    def graph(self) -> GraphStore | None:
        """The graph store that names entities as a document filter's documents do, if given."""
        return None if self._graph is None else self._graph.get()

    def _store_refs(self) -> dict[str, StoreRef[Any] | None]:
        return {"store": self._store, "ids_of_documents": self._ids, "graph": self._graph}

    def _plain_params(self) -> dict[str, Any]:
        return {"top_k": self.top_k, "method": self.method.value, "names": self.names}

    @component.output_types(results=list[SearchResult], status=MethodStatus)
    def run(
        self, query: str, query_embedding: Embedding, top_k: int | None = None, filters: SearchFilters | None = None
    ) -> MethodOutput:
        """Search entities for ``query``.

        Returns:
            ``results``: entities best first, each with this method's name; ``status``: how the method went.
        """
        limit = top_k or self.top_k

        def search() -> list[SearchResult]:
            if filters is not None and filters.document_ids and self.graph is not None:
                scoped = self._scoped_hits(query, query_embedding, filters, limit)
                return self._in_scope(
                    [SearchResult(entity_from_payload(h), h.score, self.method, (self.method,)) for h in scoped],
                    filters,
                )
            condition = payload_filter_for(VectorCollection.ENTITIES, RESOLVED_ONLY, filters, self.ids_of_documents)
            hits = self.store.query(query_embedding.values, query, limit, condition)
            named = self._named(query, query_embedding, condition, limit)
            first = {h.id for h in named}
            ranked = [*named, *(h for h in hits if h.id not in first)][:limit]
            results = [SearchResult(entity_from_payload(h), h.score, self.method, (self.method,)) for h in ranked]
            return self._in_scope(results, filters) if filters is not None and filters.document_ids else results

        return guarded_run(self.method, lambda: self._with_merged(search(), filters))

    def _with_merged(self, results: list[SearchResult], filters: SearchFilters | None) -> list[SearchResult]:
        """Each entity that absorbed others as a ``ResolvedEntity`` naming them; without ``graph``, as found.

        Under a document filter only the merged records those documents name are shown, as the entity's own name is.
        Items and order are unchanged otherwise: a ``ResolvedEntity`` keys, fuses and ranks as its ``Entity``.
        """
        if self.graph is None or not results:
            return results
        members = self.graph.merged_members([r.item.id for r in results])
        if members and filters is not None and filters.document_ids:
            named = {record_id for record_id, _, _ in self.graph.entity_records_of_documents(filters.document_ids)}
            members = {key: [m for m in found if m.id in named] for key, found in members.items()}
        if not members:
            return results
        return [
            replace(r, item=with_merged(r.item, members.get(r.item.id, ()))) if isinstance(r.item, Entity) else r
            for r in results
        ]

    def _in_scope(self, results: list[SearchResult], filters: SearchFilters) -> list[SearchResult]:
        """The results as the filter's documents name them; those the renamed entity no longer fits are dropped."""
        if self.graph is None:
            raise RetrievalError("An entity search limited to documents needs the graph store to name its entities.")
        named = {e.id: e for e in self.graph.visible_entities([r.item.id for r in results], filters.document_ids)}
        kept = []
        for result in results:
            entity = named.get(result.item.id)
            if entity is not None and entity_passes(entity, filters):
                kept.append(replace(result, item=entity))
        return kept

    def _scoped_hits(
        self, query: str, query_embedding: Embedding, filters: SearchFilters, limit: int
    ) -> list[VectorHit]:
        """Hits within documents, each standing for its resolved entity, best first.

        Only the entity records the documents' chunks name are searched (a merged entity's members each by its own
        name and text), so a name only another document gives an entity neither finds it nor ranks it.
        """
        assert self.graph is not None  # checked by the caller
        records = self.graph.entity_records_of_documents(filters.document_ids)
        resolved = {record_id: resolved_id for record_id, resolved_id, _ in records}
        if not resolved:
            return []
        unscoped = replace(filters, document_ids=())  # the documents are the records' ids below
        condition = payload_filter_for(VectorCollection.ENTITIES, PayloadFilter(), unscoped).only_ids(resolved)
        hits = self.store.query(query_embedding.values, query, 2 * limit, condition)
        named_hits: list[VectorHit] = []
        if self.names is not None:
            by_name: dict[str, list[str]] = {}
            for _, resolved_id, norm_name in records:
                ids = by_name.setdefault(norm_name, [])
                if resolved_id not in ids:
                    ids.append(resolved_id)
            counts = self.names.scoped(filters.document_ids)
            in_query = query_entity_ids(query, lambda name: by_name.get(name, []))
            named = sorted(in_query, key=lambda e: (counts.chunk_count(e), in_query.index(e)))[:limit]
            wanted = [record_id for record_id, resolved_id in resolved.items() if resolved_id in named]
            if wanted:
                named_hits = self.store.query(query_embedding.values, query, len(wanted), condition.only_ids(wanted))
                named_hits.sort(key=lambda hit: named.index(resolved[hit.id]))
        ranked: dict[str, VectorHit] = {}
        for hit in (*named_hits, *hits):
            ranked.setdefault(resolved[hit.id], VectorHit(resolved[hit.id], hit.score, hit.payload))
        return list(ranked.values())[:limit]

    def _named(self, query: str, query_embedding: Embedding, condition: PayloadFilter, limit: int) -> list[VectorHit]:
        """The hits of the entities the query names, rarest first (none without ``names``)."""
        if self.names is None:
            return []
        graph = self.names.names_for(candidate_names(query))
        named = rarest_names_first(query_name_groups(query, graph.entities_named), graph.chunk_count)[:limit]
        if not named:
            return []
        hits = self.store.query(query_embedding.values, query, len(named), condition.only_ids(named))
        order = {entity_id: position for position, entity_id in enumerate(named)}
        return sorted(hits, key=lambda hit: order[hit.id])


def entity_passes(entity: Entity, filters: SearchFilters | None) -> bool:
    """Whether ``entity`` (as shown) meets the label and name/label property conditions of ``filters``."""
    if filters is None:
        return True
    if filters.labels and entity.label not in filters.labels:
        return False
    for key, value in filters.properties.items():
        stored = {"name": entity.name, "label": entity.label}.get(key)
        if stored is None or stored not in (value if isinstance(value, tuple) else (value,)):
            return False
    return True


def _entity_ids(store: KnowledgeStore) -> IdsOfDocuments:
    return store.graph.entity_ids_of_documents
