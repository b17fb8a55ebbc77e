"""Contract of the entity-resolution role (``GraphResolutionLog``), run against every graph-store backend."""

import pytest

from agrag.components.data_models.resolution import (
    KEPT_APART,
    MERGED,
    MergeDecision,
    MergeOutcome,
    ResolutionCandidate,
    ResolutionRule,
)
from agrag.components.errors import MergeNotFoundError, StoreError
from agrag.components.stores.graph_store import GraphResolutionLog, GraphStore
from tests.components.stores.graph_contract import ID, Corpus, as_role

ORION, VEGA, SLAM = ID["Orion Planner"], ID["Vega Perception"], ID["SLAM"]


@pytest.fixture
def resolution(graph_corpus: tuple[GraphStore, Corpus]) -> GraphResolutionLog:
    return as_role(graph_corpus, GraphResolutionLog)


def merge_vega_into_orion(resolution: GraphResolutionLog) -> None:
    decisions = [
        MergeDecision(VEGA, ORION, MERGED, "fuzzy", 91.0, "alike"),
        MergeDecision(SLAM, ORION, KEPT_APART, "label", 0.0, "different labels"),
    ]
    resolution.apply_resolution(
        decisions, [ResolutionCandidate(SLAM, ORION, "SLAM", "Orion Planner", 0.7, ResolutionRule.EMBEDDING)], "r1"
    )


def test_merges_are_pointers_that_reads_resolve(resolution: GraphResolutionLog) -> None:
    assert {e.id for e in resolution.canonical_entities()} == set(ID.values())
    merge_vega_into_orion(resolution)
    assert {e.id for e in resolution.canonical_entities()} == set(ID.values()) - {VEGA}
    assert resolution.resolved_ids([VEGA, SLAM, "e-none"]) == {VEGA: ORION, SLAM: SLAM}


def test_every_decision_is_logged_with_both_names_and_near_misses_kept(resolution: GraphResolutionLog) -> None:
    merge_vega_into_orion(resolution)
    log = resolution.merge_log()
    assert [(e.id, e.decision, e.member_name, e.resolved_name, e.undone) for e in log] == [
        ("r1-00000", MERGED, "Vega Perception", "Orion Planner", False),
        ("r1-00001", KEPT_APART, "SLAM", "Orion Planner", False),
    ]
    assert resolution.candidates() == [
        ResolutionCandidate(SLAM, ORION, "SLAM", "Orion Planner", 0.7, ResolutionRule.EMBEDDING)
    ]
    # closed sets come back as their enums, not the plain strings the store holds
    assert [(type(e.decision), type(e.rule)) for e in log] == [(MergeOutcome, ResolutionRule)] * 2
    assert [e.rule for e in log] == [ResolutionRule.FUZZY, ResolutionRule.LABEL]
    assert type(resolution.candidates()[0].rule) is ResolutionRule


def test_positions_name_the_log_lines_of_part_of_a_run(resolution: GraphResolutionLog) -> None:
    decision = MergeDecision(VEGA, ORION, MERGED, "fuzzy", 91.0, "alike")
    resolution.apply_resolution([decision], [], "r2", positions=[7])
    assert [e.id for e in resolution.merge_log()] == ["r2-00007"]
    with pytest.raises(StoreError, match="one position per decision"):
        resolution.apply_resolution([decision], [], "r3", positions=[1, 2])


def test_undoing_a_merge_clears_the_pointer_and_marks_the_line(resolution: GraphResolutionLog) -> None:
    merge_vega_into_orion(resolution)
    undone = resolution.undo_merge(VEGA)
    assert [(e.id, e.undone) for e in undone] == [("r1-00000", True)]
    assert resolution.resolved_ids([VEGA]) == {VEGA: VEGA}
    with pytest.raises(MergeNotFoundError):
        resolution.undo_merge("r1-00000")  # no longer active
