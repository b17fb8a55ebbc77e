"""``QdrantChunkRetriever``: the ``chunk`` method, passages by dense and keyword similarity."""

from __future__ import annotations

from haystack import component

from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.retrievers.chunk_parents import parents_of
from agrag.components.retrievers.filter_conditions import payload_filter_for
from agrag.components.retrievers.guarded_run import guarded_filtered_run
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.vector_payloads import chunk_from_payload
from agrag.components.stores.vector_store import CURRENT, STATUS_FIELD, PayloadFilter, VectorCollection, VectorStore

CURRENT_ONLY = PayloadFilter(((STATUS_FIELD, CURRENT),))


@component
class QdrantChunkRetriever:
    """Finds chunks of current document versions, ranked by RRF of their dense and BM25 legs.

    A failure is reported in ``status`` and gives no results, so the other methods of a recipe still return.

    Usage:
        ```python
        retriever = QdrantChunkRetriever(store.chunks, top_k=10)
        out = retriever.run(query="Who wrote the Orion Planner?", query_embedding=vector)
        ```
    """

    def __init__(
        self, store: VectorStore, top_k: int = 10, method: str = "chunk", graph: GraphStore | None = None
    ) -> None:
        """Search ``store`` (the chunks collection); with ``graph``, each child chunk comes with its parent."""
        self.store = store
        self.top_k = top_k
        self.method = method
        self.graph = graph

    @component.output_types(results=list[SearchResult], status=MethodStatus)
    def run(
        self, query: str, query_embedding: Embedding, top_k: int | None = None, filters: SearchFilters | None = None
    ) -> MethodOutput:
        """Search chunks for ``query``.

        Returns:
            ``results``: chunks best first, each with this method's name; ``status``: how the method went.
        """
        limit = top_k or self.top_k

        def search(condition: PayloadFilter) -> list[SearchResult]:
            hits = self.store.query(query_embedding.values, query, limit, condition)
            chunks = [chunk_from_payload(h) for h in hits]
            parents = parents_of(self.graph, chunks)
            return [
                SearchResult(c, h.score, self.method, (self.method,), parents.get(c.parent_id or ""))
                for c, h in zip(chunks, hits, strict=True)
            ]

        return guarded_filtered_run(
            self.method, lambda: payload_filter_for(VectorCollection.CHUNKS, CURRENT_ONLY, filters), search
        )
