"""``QdrantFactRetriever``: the ``fact`` method, statements of the graph that match the query, with their passages."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack import component

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.retrieval_method import RetrievalMethod
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.retrievers.fact_matches import fact_condition
from agrag.components.retrievers.guarded_run import guarded_filtered_run
from agrag.components.stores.graph_read_roles import GraphEvidenceReader
from agrag.components.stores.store_backed import StoreBacked
from agrag.components.stores.store_ref import StoreRef, chunks_part, facts_part, graph_part
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_payloads import fact_from_payload
from agrag.components.stores.vector_store import PayloadFilter, VectorStore


@component
class QdrantFactRetriever(StoreBacked):
    """Finds facts (``Victor Hale -[owns]-> Osprey Ceramics``) whose statement and sentence match the query.

    The facts collection holds one point per relation a current passage states: its dense vector is computed from
    the statement and the sentence, its keyword leg indexes both, so a predicate word ("owns") finds it too. The two
    legs are fused inside the store, under the search's filters (current facts; relation types; within documents,
    only facts every passage of which is in them). Each fact comes with the passages that state it, read within the
    same documents and kept only while current, the one most like the query first (with ``chunks``), so a fact is
    cited through its passages; a fact left with none is not returned.

    A failure is reported in ``status`` and gives no results, so the other methods of a recipe still return.
    Built from open stores or from a ``StoreSpec`` (opened in ``warm_up``), it serializes as the spec.

    Usage:
        ```python
        retriever = QdrantFactRetriever(store.facts, graph=store.graph, chunks=store.chunks, top_k=10)
        out = retriever.run(query="Who owns Osprey Ceramics?", query_embedding=vector)
        print([r.item.statement for r in out["results"]])
        ```
    """

    def __init__(
        self,
        store: VectorStore | StoreSpec,
        top_k: int = 10,
        method: RetrievalMethod | str = RetrievalMethod.FACT,
        *,
        graph: GraphEvidenceReader | StoreSpec,
        chunks: VectorStore | StoreSpec | None = None,
    ) -> None:
        """Search ``store`` (the facts collection); read each fact's passages from ``graph``.

        With ``chunks`` (the chunks collection), a fact's passages are ordered by their similarity to the query.
        Each may be a ``StoreSpec``: the collection, or the graph, of the data dir it names.
        """
        self._store = StoreRef(store, facts_part)
        self.top_k = top_k
        self.method = RetrievalMethod.from_str(method)
        self._graph: StoreRef[GraphEvidenceReader] = StoreRef(graph, graph_part)
        self._chunks = None if chunks is None else StoreRef(chunks, chunks_part)

    @property
    def store(self) -> VectorStore:
        """The facts collection (opened from its spec on first use)."""
        return self._store.get()

    @property
    def graph(self) -> GraphEvidenceReader:
        """The graph store the passages are read from."""
        return self._graph.get()

    def _store_refs(self) -> dict[str, StoreRef[Any] | None]:
        return {"store": self._store, "graph": self._graph, "chunks": self._chunks}

    def _plain_params(self) -> dict[str, Any]:
        return {"top_k": self.top_k, "method": self.method.value}

    @component.output_types(results=list[SearchResult], status=MethodStatus)
    def run(
        self, query: str, query_embedding: Embedding, top_k: int | None = None, filters: SearchFilters | None = None
    ) -> MethodOutput:
        """Search facts for ``query``.

        Returns:
            ``results``: facts best first, each with its passages and this method's name; ``status``: how it went.
        """
        limit = top_k or self.top_k
        scope = filters.document_ids if filters is not None and filters.document_ids else None

        def search(condition: PayloadFilter) -> list[SearchResult]:
            hits = self.store.query(query_embedding.values, query, limit, condition)
            facts = [fact_from_payload(h) for h in hits]
            passages = self._passages([c for f in facts for c in f.chunk_ids], scope, query_embedding)
            results = []
            for fact, hit in zip(facts, hits, strict=True):
                stating = sorted((passages[c] for c in fact.chunk_ids if c in passages), key=lambda p: p[0])
                if stating:  # a passage retired since the point was settled is not cited, nor a fact left with none
                    chunks = tuple(chunk for _, chunk in stating)
                    found = replace(fact, chunk_ids=tuple(c.id for c in chunks), passages=chunks)
                    results.append(SearchResult(found, hit.score, self.method, (self.method,)))
            return results

        return guarded_filtered_run(self.method, lambda: fact_condition(filters), search)

    def _passages(
        self, chunk_ids: list[str], scope: tuple[str, ...] | None, query_embedding: Embedding
    ) -> dict[str, tuple[int, Chunk]]:
        """The current chunks among ``chunk_ids`` in ``scope``, each with its rank (most like the query first)."""
        wanted = list(dict.fromkeys(chunk_ids))
        chunks = [c for c in self.graph.get_chunks_in_scope(wanted, list(scope) if scope else None) if c.current]
        if self._chunks is None:
            return {c.id: (rank, c) for rank, c in enumerate(chunks)}
        similar = self._chunks.get().similarities(query_embedding.values, [c.id for c in chunks])
        ranked = sorted(chunks, key=lambda c: (-similar.get(c.id, -1.0), c.id))
        return {c.id: (rank, c) for rank, c in enumerate(ranked)}
