"""Page a copy of a graph store with generated offsets, limits and scopes; run as a child process by a test.

``python -m tests.support.kuzu_paging_probe GRAPH --examples N`` opens the Kùzu file ``GRAPH`` and checks, with
hypothesis, that every page of ``documents(scope, offset, limit)`` is the slice of the whole listing (empty past
the end), that an offset or limit out of range is a typed error naming it, and that a read-only graph query that
pages with SKIP is refused. It prints ``pages checked: N`` and exits 0, or exits 1 with the failing example. A
crash of Kùzu ends the child (exit -11), which the calling test reports instead of dying with it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agrag.components.data_models.paging import MAX_OFFSET
from agrag.components.errors import AgragError, GraphQueryRefusedError
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

MAX_LIMIT = 1000
SKIPPING_QUERIES = (
    "MATCH (d:Document) RETURN d.id ORDER BY d.id SKIP {skip} LIMIT 5",
    "MATCH (d:Document) WITH d ORDER BY d.source_path SKIP {skip} LIMIT 3 RETURN d.id",
    "MATCH (c:Chunk) RETURN c.id ORDER BY c.id, c.ord skip {skip} limit 1",
)


def offsets() -> st.SearchStrategy[int]:
    """Offsets at the end of a small listing, where Kùzu's sort blocks end, at the maximum and far outside it."""
    return st.one_of(
        st.integers(0, 12),
        st.integers(5_000, 70_000),
        st.integers(0, MAX_OFFSET),
        st.sampled_from([MAX_OFFSET - 1, MAX_OFFSET, MAX_OFFSET + 1, 2**31, 2**63 - 1, 2**63, 10**20, -1, -(2**63)]),
    )


def limits() -> st.SearchStrategy[int]:
    return st.one_of(
        st.integers(1, 5), st.integers(1, MAX_LIMIT), st.sampled_from([0, -1, MAX_LIMIT + 1, 2**63, 10**20])
    )


def probe(graph: KuzuGraphStore, examples: int) -> int:
    """Check ``examples`` generated pages (and the SKIP queries); return how many pages were checked."""
    every = [d.id for d in graph.documents(None, 0, MAX_LIMIT)]
    assert every, "the graph holds no document"
    scopes = st.one_of(st.none(), st.lists(st.sampled_from([*every, "d-unknown"]), max_size=len(every) + 1))
    checked = 0

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=(Phase.explicit, Phase.generate),  # a crash cannot be shrunk; the last example is printed
        suppress_health_check=list(HealthCheck),
    )
    @given(scope=scopes, offset=offsets(), limit=limits())
    def page(scope: list[str] | None, offset: int, limit: int) -> None:
        nonlocal checked
        print(f"page scope={scope} offset={offset} limit={limit}", flush=True)
        listing = every if scope is None else [i for i in every if i in scope]
        if not (0 <= offset <= MAX_OFFSET and 1 <= limit <= MAX_LIMIT):
            try:
                graph.documents(scope, offset, limit)
            except AgragError as exc:
                field = "offset" if not 0 <= offset <= MAX_OFFSET else "limit"
                assert field in str(exc), str(exc)
            else:
                raise AssertionError(f"offset={offset} limit={limit} was not refused")
        else:
            assert [d.id for d in graph.documents(scope, offset, limit)] == listing[offset : offset + limit]
        checked += 1

    page()
    for query in SKIPPING_QUERIES:
        for skip in (0, 10_000, 1_000_000):
            try:
                graph.run_read_only(query.format(skip=skip))
            except GraphQueryRefusedError as exc:
                assert "SKIP" in str(exc), str(exc)
            else:
                raise AssertionError(f"{query.format(skip=skip)!r} was not refused")
    return checked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("graph", type=Path)
    parser.add_argument("--examples", type=int, default=200)
    arguments = parser.parse_args()
    graph = KuzuGraphStore(arguments.graph)
    try:
        checked = probe(graph, arguments.examples)
    finally:
        graph.close()
    print(f"pages checked: {checked}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
