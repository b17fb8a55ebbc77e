"""``QdrantChunkRetriever``: the ``chunk`` method, passages by dense and keyword similarity."""

from __future__ import annotations

from typing import Any

from haystack import component

from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.retrieval_method import RetrievalMethod
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.retrievers.chunk_parents import parents_of
from agrag.components.retrievers.filter_conditions import payload_filter_for
from agrag.components.retrievers.guarded_run import guarded_filtered_run
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.store_backed import StoreBacked
from agrag.components.stores.store_ref import StoreRef, chunks_part, graph_part
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_payloads import chunk_from_payload
from agrag.components.stores.vector_store import CURRENT, STATUS_FIELD, PayloadFilter, VectorCollection, VectorStore

CURRENT_ONLY = PayloadFilter(((STATUS_FIELD, CURRENT),))


@component
class QdrantChunkRetriever(StoreBacked):
    """Finds chunks of current document versions, ranked by RRF of their dense and BM25 legs.

    A failure is reported in ``status`` and gives no results, so the other methods of a recipe still return.
    Built from open stores or from a ``StoreSpec`` (opened in ``warm_up``), it serializes as the spec.

    Usage:
        ```python
        retriever = QdrantChunkRetriever(store.chunks, top_k=10)
        out = retriever.run(query="Who wrote the Orion Planner?", query_embedding=vector)
        ```
    """

    def __init__(
        self,
        store: VectorStore | StoreSpec,
        top_k: int = 10,
        method: RetrievalMethod | str = RetrievalMethod.CHUNK,
        graph: GraphStore | StoreSpec | None = None,
    ) -> None:
        """Search ``store`` (the chunks collection); with ``graph``, each child chunk comes with its parent.

        Either may be a ``StoreSpec``: the chunks collection, or the graph, of the data dir it names.
        """
        self._store = StoreRef(store, chunks_part)
        self.top_k = top_k
        self.method = RetrievalMethod.from_str(method)
        self._graph = None if graph is None else StoreRef(graph, graph_part)

    @property
    def store(self) -> VectorStore:
        """The chunks collection (opened from its spec on first use)."""
        return self._store.get()

    @property
    def graph(self) -> GraphStore | None:
        """The graph store that names each child chunk's parent, if any."""
        return None if self._graph is None else self._graph.get()

    def _store_refs(self) -> dict[str, StoreRef[Any] | None]:
        return {"store": self._store, "graph": self._graph}

    def _plain_params(self) -> dict[str, Any]:
        return {"top_k": self.top_k, "method": self.method.value}

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
