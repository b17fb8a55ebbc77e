"""``QdrantCommunityRetriever``: the ``community`` method, community reports by the meaning and words of the query."""

from __future__ import annotations

from haystack import component

from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.retrievers.filter_conditions import IdsOfDocuments, payload_filter_for
from agrag.components.retrievers.guarded_run import guarded_filtered_run
from agrag.components.stores.vector_payloads import community_from_payload
from agrag.components.stores.vector_store import PayloadFilter, VectorCollection, VectorStore


@component
class QdrantCommunityRetriever:
    """Finds the communities whose reports (title, summary, findings) are closest to the query.

    A failure is reported in ``status`` and gives no results, so the other methods of a recipe still return.

    Usage:
        ```python
        retriever = QdrantCommunityRetriever(store.communities, top_k=5)
        out = retriever.run(query="What are the main themes?", query_embedding=vector)
        ```
    """

    def __init__(
        self,
        store: VectorStore,
        top_k: int = 5,
        method: str = "community",
        ids_of_documents: IdsOfDocuments | None = None,
    ) -> None:
        """Search ``store`` (the communities collection); ``ids_of_documents`` serves ``document_ids`` filters."""
        self.store = store
        self.top_k = top_k
        self.method = method
        self.ids_of_documents = ids_of_documents

    @component.output_types(results=list[SearchResult], status=MethodStatus)
    def run(
        self, query: str, query_embedding: Embedding, top_k: int | None = None, filters: SearchFilters | None = None
    ) -> MethodOutput:
        """Search community reports for ``query``.

        Returns:
            ``results``: communities with their reports, best first; ``status``: how the method went.
        """
        limit = top_k or self.top_k

        def condition() -> PayloadFilter:
            return payload_filter_for(VectorCollection.COMMUNITIES, PayloadFilter(), filters, self.ids_of_documents)

        def search(where: PayloadFilter) -> list[SearchResult]:
            hits = self.store.query(query_embedding.values, query, limit, None if where.empty else where)
            return [SearchResult(community_from_payload(h), h.score, self.method, (self.method,)) for h in hits]

        return guarded_filtered_run(self.method, condition, search)
