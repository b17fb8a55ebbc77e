"""Contract of ``GraphRetrievalReader.merged_members``: what each resolved entity absorbed, from the merge log."""

import pytest

from agrag.components.data_models.resolution import MERGED, MergeDecision, ResolutionRule
from agrag.components.data_models.resolved_entity import MergedEntity
from agrag.components.stores.graph_store import GraphStore
from tests.components.stores.graph_contract import ID, NAMES, Corpus

ORION, VEGA, SLAM, MARIA = ID["Orion Planner"], ID["Vega Perception"], ID["SLAM"], ID["Maria Chen"]


@pytest.fixture
def graph(graph_corpus: tuple[GraphStore, Corpus]) -> GraphStore:
    return graph_corpus[0]


def merged(entity: str, rule: ResolutionRule, score: float, reason: str) -> MergedEntity:
    return MergedEntity(ID[entity], entity, NAMES[entity], rule, score, reason)


def merge(graph: GraphStore, run: str, *decisions: tuple[str, str, ResolutionRule, float, str]) -> None:
    graph.apply_resolution([MergeDecision(m, r, MERGED, rule, s, why) for m, r, rule, s, why in decisions], [], run)


def test_each_resolved_entity_lists_the_entities_merged_into_it_with_the_rule(graph: GraphStore) -> None:
    assert graph.merged_members([ORION, MARIA]) == {}
    merge(
        graph,
        "r1",
        (VEGA, ORION, ResolutionRule.FUZZY, 91.0, "alike names"),
        (SLAM, ORION, ResolutionRule.ACRONYM, 100.0, "initials"),
    )
    assert graph.merged_members([ORION, MARIA, VEGA, "e-none"]) == {
        ORION: [
            merged("SLAM", ResolutionRule.ACRONYM, 100.0, "initials"),
            merged("Vega Perception", ResolutionRule.FUZZY, 91.0, "alike names"),
        ]
    }
    assert graph.merged_members([]) == {}


def test_a_merge_of_a_resolved_entity_brings_its_members_along(graph: GraphStore) -> None:
    merge(graph, "r1", (VEGA, ORION, ResolutionRule.FUZZY, 91.0, "alike"))
    merge(graph, "r2", (ORION, MARIA, ResolutionRule.LLM, 1.0, "the LLM says so"))
    members = graph.merged_members([MARIA, ORION])
    assert list(members) == [MARIA]
    assert [(m.name, m.rule) for m in members[MARIA]] == [
        ("Orion Planner", ResolutionRule.LLM),
        ("Vega Perception", ResolutionRule.FUZZY),  # the rule that merged it, into Orion
    ]


def test_an_undone_merge_is_no_longer_listed_and_a_new_one_shows_its_own_rule(graph: GraphStore) -> None:
    merge(graph, "r1", (VEGA, ORION, ResolutionRule.FUZZY, 91.0, "alike"))
    graph.undo_merge(VEGA)
    assert graph.merged_members([ORION]) == {}
    merge(graph, "r2", (VEGA, ORION, ResolutionRule.EMBEDDING, 0.93, "close in meaning"))
    assert graph.merged_members([ORION]) == {
        ORION: [merged("Vega Perception", ResolutionRule.EMBEDDING, 0.93, "close in meaning")]
    }
