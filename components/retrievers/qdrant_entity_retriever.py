"""``QdrantEntityRetriever``: the ``entity`` method, entities the query names, then by meaning and name words."""

from __future__ import annotations

from haystack import component

from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.graph.passage_graph_cache import PassageGraphCache
from agrag.components.retrievers.filter_conditions import IdsOfDocuments, payload_filter_for
from agrag.components.retrievers.guarded_run import guarded_run
from agrag.components.retrievers.query_names import query_entity_ids
from agrag.components.stores.vector_payloads import entity_from_payload
from agrag.components.stores.vector_store import (
    MERGED_STATUS,
    STATUS_FIELD,
    PayloadFilter,
    VectorCollection,
    VectorHit,
    VectorStore,
)

# Entities merged into another keep their point for an undo, but only resolved entities are found. An exclusion, not
# `status = current`, so entity points written before the status field existed are still found.
RESOLVED_ONLY = PayloadFilter().and_not(STATUS_FIELD, MERGED_STATUS)


@component
class QdrantEntityRetriever:
    """Finds entities whose name and description are closest to the query (dense leg) or share its words (BM25).

    With ``names`` (the graph snapshot), the entities whose whole name appears in the query come first: "Who is
    the spouse of the Green performer?" names the album *Green*, which a similarity search of the whole question
    can rank below entities that merely share its words. The rarest name comes first (fewest passages naming it,
    then the query's order), so in "Which singer is American, Mark King or Nick Hexum?" the two singers lead and
    *American* follows. They pass the same filters, inside the same store query, as every other hit.

    A failure is reported in ``status`` and gives no results, so the other methods of a recipe still return.

    Usage:
        ```python
        retriever = QdrantEntityRetriever(store.entities, top_k=10)
        out = retriever.run(query="Orion Planner", query_embedding=vector)
        ```
    """

    def __init__(
        self,
        store: VectorStore,
        top_k: int = 10,
        method: str = "entity",
        ids_of_documents: IdsOfDocuments | None = None,
        names: PassageGraphCache | None = None,
    ) -> None:
        """Search ``store`` (the entities collection); ``ids_of_documents`` serves ``document_ids`` filters."""
        self.store = store
        self.top_k = top_k
        self.method = method
        self.ids_of_documents = ids_of_documents
        self.names = names

    @component.output_types(results=list[SearchResult], status=MethodStatus)
    def run(
        self, query: str, query_embedding: Embedding, top_k: int | None = None, filters: SearchFilters | None = None
    ) -> dict[str, object]:
        """Search entities for ``query``.

        Returns:
            ``results``: entities best first, each with this method's name; ``status``: how the method went.
        """
        limit = top_k or self.top_k

        def search() -> list[SearchResult]:
            condition = payload_filter_for(VectorCollection.ENTITIES, RESOLVED_ONLY, filters, self.ids_of_documents)
            hits = self.store.query(query_embedding.values, query, limit, condition)
            named = self._named(query, query_embedding, condition, limit)
            first = {h.id for h in named}
            ranked = [*named, *(h for h in hits if h.id not in first)][:limit]
            return [SearchResult(entity_from_payload(h), h.score, self.method, (self.method,)) for h in ranked]

        return guarded_run(self.method, search)

    def _named(self, query: str, query_embedding: Embedding, condition: PayloadFilter, limit: int) -> list[VectorHit]:
        """The hits of the entities the query names, rarest first (none without ``names``)."""
        if self.names is None:
            return []
        graph = self.names.get()
        in_query = query_entity_ids(query, graph.entities_named)
        named = sorted(in_query, key=lambda e: (graph.chunk_count(e), in_query.index(e)))[:limit]
        if not named:
            return []
        hits = self.store.query(query_embedding.values, query, len(named), condition.only_ids(named))
        order = {entity_id: position for position, entity_id in enumerate(named)}
        return sorted(hits, key=lambda hit: order[hit.id])
