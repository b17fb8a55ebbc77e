"""Report inputs read by ranges of entity ids equal those read a batch of ids at a time (``KuzuCommunities``)."""

import pytest

from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.kuzu import communities
from tests.components.stores.graph_contract import ID, Corpus


@pytest.mark.parametrize(
    ("asked", "among"),
    [
        ([ID["Maria Chen"], ID["Orion Planner"], ID["SLAM"]], None),
        ([ID["Orion Planner"]], [ID["Maria Chen"], ID["SLAM"]]),
        (sorted(ID.values()), None),
        ([ID["Acme Robotics"], "an-id-nobody-stored"], sorted(ID.values())),
    ],
)
def test_ranges_and_batches_of_ids_read_the_same_inputs(
    graph_corpus: tuple[GraphStore, Corpus],
    monkeypatch: pytest.MonkeyPatch,
    asked: list[str],
    among: list[str] | None,
) -> None:
    graph, _ = graph_corpus
    read = {}
    for share, ids_a_range in ((0, communities.RANGE_IDS), (10**9, communities.RANGE_IDS), (10**9, 1)):
        monkeypatch.setattr(communities, "RANGE_SHARE", share)  # 0: by ids; 10**9: by ranges, whatever the ask
        monkeypatch.setattr(communities, "RANGE_IDS", ids_a_range)  # 1: a range per id, its ends both its own
        entities, relations, chunks, mentions = graph.community_inputs(asked, among)  # type: ignore[attr-defined]
        read[(share, ids_a_range)] = (entities, sorted(relations, key=lambda r: r.id), chunks, mentions)
    by_ids, *by_ranges = read.values()
    if among is None:  # these asks have relations and mentions: the comparison is not of empty reads
        assert by_ids[1] and by_ids[3]
    assert all(ranged == by_ids for ranged in by_ranges)
