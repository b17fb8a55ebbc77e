"""The one failure guard: a method whose store fails, even while it builds its store filters, lands on the trace."""

from pathlib import Path

import pytest
from haystack import Pipeline

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community, CommunityReport
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.expanders.graph_community_expander import GraphCommunityExpander
from agrag.components.joiners.rrf_joiner import RRFJoiner
from agrag.components.retrievers.guarded_run import guarded_filtered_run
from agrag.components.retrievers.qdrant_chunk_retriever import QdrantChunkRetriever
from agrag.components.retrievers.qdrant_community_retriever import QdrantCommunityRetriever
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.vector_payloads import chunk_payload
from agrag.components.stores.vector_store import PayloadFilter, VectorCollection, VectorPoint

DIM = 384
VECTOR = Embedding(tuple([1.0] + [0.0] * (DIM - 1)))
CHUNK = Chunk("d.v.0", "d", "v", "Orion Planner notes", ("T",), 0, 0, 19, None, "T")


@pytest.fixture
def closed_graph(tmp_path: Path) -> KuzuGraphStore:
    """A real graph store that was closed: every query on it fails with a ``StoreError``, as a lost backend would."""
    graph = KuzuGraphStore(tmp_path / "g.kuzu")
    graph.close()
    return graph


def test_a_store_failure_while_building_the_filter_is_a_failed_method_on_the_trace(
    tmp_path: Path, closed_graph: KuzuGraphStore
) -> None:
    chunks = QdrantEdgeVectorStore(tmp_path / "chunks", VectorCollection.CHUNKS, DIM)
    communities = QdrantEdgeVectorStore(tmp_path / "communities", VectorCollection.COMMUNITIES, DIM)
    chunks.upsert([VectorPoint(CHUNK.id, list(VECTOR.values), CHUNK.text, chunk_payload(CHUNK))])
    # The community method asks the graph for the communities of the filter's documents while it builds its filter.
    community = QdrantCommunityRetriever(communities, ids_of_documents=closed_graph.community_ids_of_documents)
    pipeline = Pipeline()
    pipeline.add_component("chunk", QdrantChunkRetriever(chunks))
    pipeline.add_component("community", community)
    pipeline.add_component("fusion", RRFJoiner())
    pipeline.connect("chunk.results", "fusion.results")
    pipeline.connect("community.results", "fusion.results")
    filters = SearchFilters(document_ids=("d",))
    inputs = {"query": "Orion Planner", "query_embedding": VECTOR, "filters": filters}
    try:
        outputs = pipeline.run({"chunk": inputs, "community": inputs}, include_outputs_from={"chunk", "community"})
    finally:
        chunks.close()
        communities.close()
    assert [r.item.id for r in outputs["fusion"]["results"]] == [CHUNK.id]
    assert outputs["chunk"]["status"].ok
    failed = outputs["community"]["status"]
    assert not failed.ok
    assert failed.method == "community"
    assert failed.error.startswith("StoreError: ") and "closed" in failed.error
    assert outputs["community"]["results"] == []


def test_the_guard_runs_the_filter_builder_inside_it() -> None:
    searched: list[PayloadFilter] = []

    def broken_filter() -> PayloadFilter:
        raise ValueError("no such payload index")

    out = guarded_filtered_run("chunk", broken_filter, lambda where: searched.append(where) or [])
    assert out["results"] == []
    assert out["status"].error == "ValueError: no such payload index"
    assert searched == []  # the search never runs without its filter

    built = PayloadFilter().and_("document_id", ("d",))
    ok = guarded_filtered_run("chunk", lambda: built, lambda where: searched.append(where) or [])
    assert ok["status"].ok and searched == [built]


def test_a_store_failure_of_the_community_step_is_reported_not_raised(closed_graph: KuzuGraphStore) -> None:
    found = [SearchResult(Entity("e1", "Orion Planner", "Name"), 1.0, "entity", ("entity",))]
    out = GraphCommunityExpander(closed_graph).run(results=found)
    assert out["results"] == []
    assert not out["status"].ok
    assert out["status"].method == "community_expand"
    assert out["status"].error.startswith("StoreError: ")


def test_the_community_step_still_returns_reports(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "g.kuzu")
    try:
        report = CommunityReport("Orion", "The Orion Planner team.", 5.0)
        graph.upsert_entities([Entity("e1", "Orion Planner", "Name")])
        graph.replace_communities([Community("k1", 0, ("e1",), report=report)])
        found = [SearchResult(Entity("e1", "Orion Planner", "Name"), 1.0, "entity", ("entity",))]
        out = GraphCommunityExpander(graph).run(results=found)
    finally:
        graph.close()
    assert out["status"].ok
    assert [r.item.id for r in out["results"]] == ["k1"]
    assert out["results"][0].method == "community_expand"
