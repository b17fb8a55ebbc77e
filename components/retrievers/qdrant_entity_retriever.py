"""``QdrantEntityRetriever``: the ``entity`` method, entities by the meaning and the words of their names."""

from __future__ import annotations

from haystack import component

from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.retrievers.filter_conditions import IdsOfDocuments, payload_filter_for
from agrag.components.retrievers.guarded_run import guarded_run
from agrag.components.stores.vector_payloads import entity_from_payload
from agrag.components.stores.vector_store import (
    MERGED_STATUS,
    STATUS_FIELD,
    PayloadFilter,
    VectorCollection,
    VectorStore,
)

# Entities merged into another keep their point for an undo, but only resolved entities are found. An exclusion, not
# `status = current`, so entity points written before the status field existed are still found.
RESOLVED_ONLY = PayloadFilter().and_not(STATUS_FIELD, MERGED_STATUS)


@component
class QdrantEntityRetriever:
    """Finds entities whose name and description are closest to the query (dense leg) or share its words (BM25).

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
    ) -> None:
        """Search ``store`` (the entities collection); ``ids_of_documents`` serves ``document_ids`` filters."""
        self.store = store
        self.top_k = top_k
        self.method = method
        self.ids_of_documents = ids_of_documents

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
            return [SearchResult(entity_from_payload(h), h.score, self.method, (self.method,)) for h in hits]

        return guarded_run(self.method, search)
