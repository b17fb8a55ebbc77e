"""Relation-type and direction filters in Cypher, as a property: Kùzu's walk equals a plain breadth-first oracle.

Hypothesis writes small graphs (entities, typed relations, self-loops and parallel edges included) and walks them
with a random relation-type filter, direction and depth; the Cypher walk must return exactly the relations, at
exactly the hops, of a breadth-first walk written here in Python from ``traverse``'s documented rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

NAMES = tuple(f"Entity {letter}" for letter in "ABCDEFG")
TYPES = ("OWNS", "USES", "NEAR")
Edge = tuple[str, str, str, int]  # source name, type, target name, supporting chunks

edges_strategy = st.lists(
    st.tuples(st.sampled_from(NAMES), st.sampled_from(TYPES), st.sampled_from(NAMES), st.integers(1, 3)),
    min_size=1,
    max_size=14,
    unique_by=lambda e: (e[0], e[1], e[2]),
)


def oracle(edges: list[Edge], seeds: set[str], types: set[str], direction: str, depth: int) -> set[tuple[str, int]]:
    """(relation id, hop) of the walk: each hop expands only the entities first reached by the hop before.

    A loop (an entity related to itself) is never walked: it leads nowhere.
    """
    found: dict[str, int] = {}
    reached = set(seeds)
    frontier = set(seeds)
    for hop in range(1, depth + 1):
        new_ends: set[str] = set()
        for source, kind, target, _ in edges:
            rid = relation_id_for(source, target, kind)
            if rid in found or (types and kind not in types) or source == target:  # a loop says nothing: skipped
                continue
            ends = []
            if direction in ("out", "both") and source in frontier:
                ends.append(target)
            if direction in ("in", "both") and target in frontier:
                ends.append(source)
            if ends:
                found[rid] = hop
                new_ends.update(end for end in ends if end not in reached)
        reached |= new_ends
        frontier = new_ends
    return set(found.items())


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    named_edges=edges_strategy,
    walk=st.tuples(
        st.sets(st.sampled_from(NAMES), min_size=1, max_size=2),
        st.sets(st.sampled_from(TYPES), max_size=2),
        st.sampled_from(("both", "out", "in")),
        st.integers(1, 3),
    ),
)
def test_the_cypher_walk_keeps_to_types_and_direction_like_a_breadth_first_walk(
    tmp_path_factory: pytest.TempPathFactory, named_edges: list[Edge], walk: tuple[set[str], set[str], str, int]
) -> None:
    seeds, types, direction, depth = walk
    ids = {name: entity_id_for(name) for name in NAMES}
    edges = [(ids[s], kind, ids[t], support) for s, kind, t, support in named_edges]
    graph = KuzuGraphStore(Path(tmp_path_factory.mktemp("walk")) / "graph.kuzu")
    try:
        graph.upsert_entities([Entity(ids[name], name, "Thing") for name in NAMES])
        graph.upsert_relations(
            [
                Relation(relation_id_for(s, t, kind), s, t, kind, tuple(f"c{n}" for n in range(support)))
                for s, kind, t, support in edges
            ]
        )
        walked = graph.traverse(sorted(ids[s] for s in seeds), sorted(types) or None, direction=direction, depth=depth)
    finally:
        graph.close()
    assert all(not types or relation.type in types for relation, _ in walked)
    assert len({relation.id for relation, _ in walked}) == len(walked), "a relation came twice"
    assert {(relation.id, hop) for relation, hop in walked} == oracle(
        edges, {ids[s] for s in seeds}, types, direction, depth
    )
