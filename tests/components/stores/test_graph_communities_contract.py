"""Contract of the communities role (``GraphCommunityStore``), run against every graph-store backend."""

import pytest

from agrag.components.data_models.community import Community, CommunityReport, Finding
from agrag.components.stores.graph_store import GraphCommunityStore, GraphStore
from tests.components.stores.graph_contract import ID, Corpus, as_role

PLANNER = (ID["Maria Chen"], ID["Orion Planner"], ID["SLAM"])


@pytest.fixture
def communities(graph_corpus: tuple[GraphStore, Corpus]) -> GraphCommunityStore:
    return as_role(graph_corpus, GraphCommunityStore)


def test_the_entity_graph_joins_resolved_entities_by_weighted_relations(communities: GraphCommunityStore) -> None:
    entity_ids, edges = communities.entity_graph()
    assert entity_ids == sorted(ID.values())
    assert sorted(edges) == sorted(
        (ID[a], ID[b], 1.0)
        for a, b in (
            ("Maria Chen", "Orion Planner"),
            ("Orion Planner", "SLAM"),
            ("Acme Robotics", "Maria Chen"),
            ("Acme Robotics", "Vega Perception"),
        )
    )


def test_report_inputs_are_the_entities_their_relations_and_the_chunks_naming_them(
    communities: GraphCommunityStore, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    entities, relations, chunks, mentions = communities.community_inputs(list(PLANNER))
    assert [e.id for e in entities] == list(PLANNER)
    assert {r.type for r in relations} == {"WROTE", "USES"}
    assert {c.id for c in chunks} == {corpus.chunk("a", 1), corpus.chunk("a", 2), corpus.chunk("b", 1)}
    assert (corpus.chunk("b", 1), ID["Maria Chen"]) in mentions


def test_a_hierarchy_replaces_the_previous_one_with_its_reports(communities: GraphCommunityStore) -> None:
    report = CommunityReport("Planning", "Who built the planner.", 7.5, (Finding("Maria wrote it", "a.md"),), "llm")
    top = Community("k-top", 0, tuple(sorted(ID.values())))
    planner = Community("k-planner", 1, tuple(sorted(PLANNER[1:])), "k-top", report)  # only document a names them
    communities.replace_communities([Community("k-old", 0, (ID["SLAM"],))])
    communities.replace_communities([top, planner])
    assert communities.communities() == [top, planner]
    assert communities.communities_of([PLANNER[1], "e-none"]) == [top, planner]
    assert communities.communities_of([ID["Acme Robotics"]]) == [top]
    assert communities.communities_of(["e-none"]) == communities.communities_of([]) == []
    assert communities.community_ids_of_documents(["b"]) == {"k-top"}
    assert communities.community_ids_of_documents(["a"]) == {"k-top", "k-planner"}
