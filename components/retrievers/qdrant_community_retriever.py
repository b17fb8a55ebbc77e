"""``QdrantCommunityRetriever``: the ``community`` method, community reports by the meaning and words of the query."""

from __future__ import annotations

from typing import Any

from haystack import component

from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.retrieval_method import RetrievalMethod
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.retrievers.filter_conditions import IdsOfDocuments, payload_filter_for
from agrag.components.retrievers.guarded_run import guarded_filtered_run
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.store_backed import StoreBacked
from agrag.components.stores.store_ref import StoreRef, communities_part
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_payloads import community_from_payload
from agrag.components.stores.vector_store import PayloadFilter, VectorCollection, VectorStore


@component
class QdrantCommunityRetriever(StoreBacked):
    """Finds the communities whose reports (title, summary, findings) are closest to the query.

    A failure is reported in ``status`` and gives no results, so the other methods of a recipe still return.
    Built from open stores or from a ``StoreSpec`` (opened in ``warm_up``), it serializes as the spec.

    Usage:
        ```python
        retriever = QdrantCommunityRetriever(store.communities, top_k=5)
        out = retriever.run(query="What are the main themes?", query_embedding=vector)
        ```
    """

    def __init__(
        self,
        store: VectorStore | StoreSpec,
        top_k: int = 5,
        method: RetrievalMethod | str = RetrievalMethod.COMMUNITY,
        ids_of_documents: IdsOfDocuments | StoreSpec | None = None,
    ) -> None:
        """Search ``store`` (the communities collection); ``ids_of_documents`` serves ``document_ids`` filters.

        Either may be a ``StoreSpec``: the communities collection, or ``graph.community_ids_of_documents``, of the
        data dir it names.
        """
        self._store = StoreRef(store, communities_part)
        self.top_k = top_k
        self.method = RetrievalMethod.from_str(method)
        self._ids = None if ids_of_documents is None else StoreRef(ids_of_documents, _community_ids)

    @property
    def store(self) -> VectorStore:
        """The communities collection (opened from its spec on first use)."""
        return self._store.get()

    @property
    def ids_of_documents(self) -> IdsOfDocuments | None:
        """The communities of some documents, for ``document_ids`` filters, if given."""
        return None if self._ids is None else self._ids.get()

    def _store_refs(self) -> dict[str, StoreRef[Any] | None]:
        return {"store": self._store, "ids_of_documents": self._ids}

    def _plain_params(self) -> dict[str, Any]:
        return {"top_k": self.top_k, "method": self.method.value}

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


def _community_ids(store: KnowledgeStore) -> IdsOfDocuments:
    return store.graph.community_ids_of_documents
