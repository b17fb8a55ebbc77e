from pathlib import Path

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.resolution import ResolutionCandidate
from agrag.components.retrievers.graph_candidate_retriever import GraphCandidateRetriever
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore


def test_candidates_are_found_by_either_name(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "g.kuzu")
    graph.upsert_entities(
        [Entity("a", "Samuel Taylor Coleridge", "Person", ""), Entity("b", "Samuel Coleridge Taylor", "Person", "")]
    )
    graph.upsert_entities(
        [Entity("c", "Atlas Controller", "Component", ""), Entity("d", "Atlas Control", "Component", "")]
    )
    graph.apply_resolution(
        [],
        [
            ResolutionCandidate("a", "b", "Samuel Taylor Coleridge", "Samuel Coleridge Taylor", 90.0, "fuzzy"),
            ResolutionCandidate("c", "d", "Atlas Controller", "Atlas Control", 92.0, "fuzzy"),
        ],
        "run-1",
    )
    found = GraphCandidateRetriever(graph).run(query="coleridge")["candidates"]
    assert [(c.entity_id, c.other_id) for c in found] == [("a", "b")]
    assert found[0].score >= 60
    assert GraphCandidateRetriever(graph).run(query="quantum chromodynamics")["candidates"] == []
    graph.close()
