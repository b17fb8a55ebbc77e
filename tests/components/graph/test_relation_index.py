"""``RelationIndex`` on its own: each record's best relations per direction, filters, members and id lookups."""

from __future__ import annotations

import numpy as np
import pytest

from agrag.components.errors import StoreError
from agrag.components.graph.relation_index import RelationColumns, RelationIndex

NONE = np.empty(0, dtype=np.int64)


def index() -> RelationIndex:
    """Records h (a hub), x, y, z, and m merged into x; relations listed best first except where ``rank`` says."""
    return RelationIndex(
        RelationColumns(
            record_ids=["h", "x", "y", "z", "m"],
            resolved=np.array([0, 1, 2, 3, 1]),
            #                     h->x h->y z->h h->m x->m y->z
            source=np.array([0, 0, 3, 0, 1, 2]),
            target=np.array([1, 2, 0, 4, 4, 3]),
            offsets=np.array([10, 11, 12, 13, 14, 15]),
            types=np.array([0, 1, 0, 0, 1, 1]),
            type_names=["USES", "OWNS"],
            order=np.array([1, 2, 0, 3, 4, 5]),  # h->y is the best, then z->h, then h->x
        )
    )


def test_the_best_relations_of_a_record_follow_the_rank_and_the_direction() -> None:
    idx = index()
    out = idx.best([0], ("a",), seen=NONE, types=None, cap=10)  # h as source: h->y, h->x, h->m
    assert [int(idx.offsets[r]) for r in out] == [11, 10, 13]
    both = idx.best([0], ("a", "b"), seen=NONE, types=None, cap=2)
    assert [int(idx.offsets[r]) for r in both] == [11, 12]  # z->h (in) ranks between h->y and h->x
    assert idx.degree(0, "a") == 3 and idx.degree(0, "b") == 1


def test_seen_types_and_loops_are_left_out() -> None:
    idx = index()
    best = idx.best([0], ("a",), seen=NONE, types=None, cap=1)
    rest = idx.best([0], ("a",), seen=best, types=None, cap=10)
    assert [int(idx.offsets[r]) for r in rest] == [10, 13]
    uses = idx.best([0], ("a", "b"), seen=NONE, types=idx.type_codes(["USES", "NOT A TYPE"]), cap=10)
    assert [int(idx.offsets[r]) for r in uses] == [12, 10, 13]
    assert len(idx.best([0], ("a",), seen=NONE, types=idx.type_codes(["NOT A TYPE"]), cap=10)) == 0
    loops = idx.best([1, 4], ("a", "b"), seen=NONE, types=None, cap=10)  # x->m joins x to its own member
    assert 14 not in [int(idx.offsets[r]) for r in loops]


def test_members_and_ids() -> None:
    idx = index()
    assert idx.with_members([1]) == [1, 4] and idx.with_members([0]) == [0]
    assert idx.positions(["m", "missing", "h", "m"]) == {"m": 4, "h": 0}
    assert idx.record_id(4) == "m" and len(idx) == 6


def test_columns_that_do_not_fit_are_an_internal_error() -> None:
    with pytest.raises(StoreError, match="differ in length"):
        RelationIndex(RelationColumns(["a"], np.array([0]), np.array([0]), np.array([]), NONE, NONE, [], NONE))
    with pytest.raises(StoreError, match="do not hold"):
        RelationIndex(
            RelationColumns(["a"], np.array([0]), np.array([0]), np.array([3]), np.array([1]), np.array([0]), ["T"],
                            np.array([0]))
        )  # fmt: skip


def test_the_read_plan_reads_a_hubs_relations_in_one_scan_and_covers_every_relation() -> None:
    idx = index()
    from_h = [int(r) for r in idx.best([0], ("a",), seen=NONE, types=None, cap=3)]  # h->y, h->x, h->m
    assert idx.read_plan(from_h, statement_cost=3_000) == [("a", 0, from_h)]
    every = list(range(len(idx)))
    plan = idx.read_plan(every, statement_cost=0)  # no fixed cost: each from its end with the fewest relations
    assert sorted(rank for _, _, group in plan for rank in group) == every
    assert all(idx.degree(record, start) <= 3 for start, record, _ in plan)
    assert idx.read_plan([], statement_cost=3_000) == []
