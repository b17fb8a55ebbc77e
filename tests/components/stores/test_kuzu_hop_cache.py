"""Walks through ``KuzuHopCache`` or the ``RelationIndex`` keep exactly the relations the hop statements keep.

Hypothesis writes graphs with hubs (a few entities in most relations, supports drawn so ties happen), merges one
entity into another (so a relation can become a loop), and walks them with random seeds, types, direction, depth,
``per_hop`` and ``limit``: with no cache, a cache of 2 rows per record (most hubs need the statement to fill in) and
the default cache, cold and warm, and with the relation index, the walks must be equal, relation for relation and
hop for hop. A write between two walks must show in the next one.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.data_models.relation_index_mode import RelationIndexMode
from agrag.components.data_models.resolution import MERGED, MergeDecision
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.kuzu.hop_cache import KuzuHopCache
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.pipelines.runtime import open_runtime
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings

NAMES = tuple(f"Entity {n}" for n in range(12))
HUBS = NAMES[:3]
TYPES = ("OWNS", "USES", "NEAR")
ID = {name: entity_id_for(name) for name in NAMES}

edges_strategy = st.lists(
    st.tuples(
        st.sampled_from(HUBS) | st.sampled_from(NAMES),
        st.sampled_from(TYPES),
        st.sampled_from(NAMES),
        st.integers(1, 4),
    ),
    min_size=4,
    max_size=40,
    unique_by=lambda e: (e[0], e[1], e[2]),
)
walk_strategy = st.tuples(
    st.sets(st.sampled_from(NAMES), min_size=1, max_size=3),
    st.sets(st.sampled_from(TYPES), max_size=2),
    st.sampled_from(("both", "out", "in")),
    st.integers(1, 3),
    st.sampled_from((None, 1, 2, 3, 5)),
    st.sampled_from((None, 2, 4, 50)),
)


def relations(edges: list[tuple[str, str, str, int]]) -> list[Relation]:
    return [
        Relation(relation_id_for(ID[s], ID[t], kind), ID[s], ID[t], kind, tuple(f"c{n}" for n in range(support)))
        for s, kind, t, support in edges
    ]


def walk(graph: KuzuGraphStore, rows: int, args: tuple, *, index: bool = False) -> list[tuple[str, int, str, str]]:  # type: ignore[type-arg]
    """The walk of ``args`` with ``rows`` kept per record by the hop cache (0: none), or with the relation index."""
    seeds, types, direction, depth, per_hop, limit = args
    graph.hop_cache_rows = rows
    graph.relation_index_mode = RelationIndexMode.INLINE if index else RelationIndexMode.OFF
    steps = graph.traverse(
        sorted(ID[s] for s in seeds), sorted(types) or None, direction=direction, depth=depth, per_hop=per_hop,
        limit=limit,
    )  # fmt: skip
    return [(r.id, hop, r.source_id, r.target_id) for r, hop in steps]


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edges=edges_strategy, walks=st.lists(walk_strategy, min_size=1, max_size=4), later=edges_strategy)
def test_cached_walks_equal_the_statements_walks_before_and_after_a_write(
    tmp_path_factory: pytest.TempPathFactory,
    edges: list[tuple[str, str, str, int]],
    walks: list[tuple],  # type: ignore[type-arg]
    later: list[tuple[str, str, str, int]],
) -> None:
    graph = KuzuGraphStore(Path(tmp_path_factory.mktemp("hops")) / "graph.kuzu")
    try:
        graph.upsert_entities([Entity(ID[name], name, "Thing") for name in NAMES])
        graph.upsert_relations(relations(edges))
        # Entity 11 resolves into Entity 10: a relation between them becomes a loop, which no walk crosses.
        graph.apply_resolution(
            [MergeDecision(ID[NAMES[11]], ID[NAMES[10]], MERGED, "fuzzy", 90.0, "same")], [], run_id="r1"
        )
        for _ in range(2):  # cold, then warm
            for args in walks:
                expected = walk(graph, 0, args)
                assert walk(graph, 2, args) == expected
                assert walk(graph, 128, args) == expected
                assert walk(graph, 0, args, index=True) == expected
        graph.upsert_relations(relations(later))  # adds support to some relations, adds others
        for args in walks:
            expected = walk(graph, 0, args)
            assert walk(graph, 2, args) == expected
            assert walk(graph, 128, args) == expected
            assert walk(graph, 0, args, index=True) == expected
    finally:
        graph.close()


def test_a_hub_walk_reads_the_hub_once_until_the_next_write(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")
    graph.relation_index_mode = RelationIndexMode.OFF  # the hop cache alone: no index built in the background
    try:
        graph.upsert_entities([Entity(ID[name], name, "Thing") for name in NAMES])
        graph.upsert_relations(relations([(HUBS[0], "USES", name, 1 + n % 3) for n, name in enumerate(NAMES[1:])]))
        first = graph.traverse([ID[HUBS[0]]], per_hop=3)
        assert graph._hop_cache is not None and len(graph._hop_cache) == 2  # one entry per direction
        statements: list[str] = []
        run = graph._run
        graph._run = lambda query, params=None: statements.append(query) or run(query, params)  # type: ignore[method-assign]
        assert graph.traverse([ID[HUBS[0]]], per_hop=3) == first
        assert not [q for q in statements if "RELATED" in q], "a warm walk went to Kùzu"
        graph.upsert_relations(relations([(HUBS[0], "OWNS", NAMES[5], 9)]))
        (best, hop), *_ = graph.traverse([ID[HUBS[0]]], per_hop=3)
        assert (best.type, best.target_id, len(best.chunk_ids), hop) == ("OWNS", ID[NAMES[5]], 9, 1)
    finally:
        graph.close()


def test_the_cache_keeps_one_write_count_and_its_size_bound() -> None:
    cache = KuzuHopCache(max_items=10)
    rows = [["r1", "USES", "", ["c1", "c2"], "a", "b"]]  # 1 row + 2 chunk ids: 3 items
    cache.put(1, "hop", "a", rows, complete=True)
    cache.put(1, "hop", "b", rows, complete=True)
    assert cache.get(1, "hop", "a") is not None and len(cache) == 2
    cache.put(0, "hop", "c", rows, complete=True)  # read before the write that made count 1: not kept
    assert cache.get(1, "hop", "c") is None
    cache.put(1, "hop", "d", rows, complete=True)
    cache.put(1, "hop", "e", rows, complete=True)  # 12 items: the least recently used ("b") goes
    assert [cache.get(1, "hop", k) is not None for k in "abde"] == [True, False, True, True]
    assert cache.get(2, "hop", "a") is None and len(cache) == 0  # a write empties it


def test_an_indexed_walk_reads_only_the_rows_it_keeps(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")
    try:
        graph.upsert_entities([Entity(ID[name], name, "Thing") for name in NAMES])
        graph.upsert_relations(relations([(HUBS[0], "USES", name, 1 + n % 3) for n, name in enumerate(NAMES[1:])]))
        graph.upsert_relations(relations([(name, "OWNS", HUBS[1], 2) for name in NAMES[3:8]]))
        args = ({HUBS[0]}, set(), "both", 2, 3, 5)
        expected = walk(graph, 0, args)
        statements: list[str] = []
        run = graph._run
        graph._run = lambda query, params=None: statements.append(query) or run(query, params)  # type: ignore[method-assign]
        assert walk(graph, 0, args, index=True) == expected
        assert graph._relation_index is not None and len(graph._relation_index[1]) == 16
        walking = [q for q in statements if "RELATED" in q]
        assert walking and all("offset(ID(x)) IN" in q for q in walking), "a hop ranked relations in Kùzu"
        assert len(walking) < len(expected)  # the rows a hop keeps from one hub are read in one statement
        statements.clear()
        assert walk(graph, 0, args, index=True) == expected
        assert not [q for q in statements if "RELATED" in q], "rows read since the last write are kept"
    finally:
        graph.close()


def test_a_background_index_is_built_once_writes_pause_and_dropped_by_the_next_write(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")
    graph.relation_index_quiet_seconds = 0.05
    try:
        graph.upsert_entities([Entity(ID[name], name, "Thing") for name in NAMES])
        graph.upsert_relations(relations([(HUBS[0], "USES", name, 1 + n % 3) for n, name in enumerate(NAMES[1:])]))
        args = ({HUBS[0]}, set(), "both", 2, 3, 5)
        expected = walk(graph, 0, args)
        graph.relation_index_mode = RelationIndexMode.BACKGROUND
        assert graph._current_relation_index() is None  # asked for, not built in the walk
        deadline = time.monotonic() + 30
        while graph._current_relation_index() is None:
            assert time.monotonic() < deadline, "the background index was never built"
            time.sleep(0.02)
        assert walk(graph, 0, args) == walk(graph, 0, args, index=True) == expected
        graph.relation_index_mode = RelationIndexMode.BACKGROUND
        graph.upsert_relations(relations([(HUBS[0], "OWNS", NAMES[5], 9)]))
        assert graph._current_relation_index() is None  # the write made it stale: walks read the store meanwhile
        (best, hop), *_ = graph.traverse([ID[HUBS[0]]], per_hop=3)
        assert (best.type, best.target_id, len(best.chunk_ids), hop) == ("OWNS", ID[NAMES[5]], 9, 1)
    finally:
        graph.close()


def test_a_served_runtime_builds_the_index_in_the_background_and_a_command_does_not(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    agrag = AgragSettings(data_dir=tmp_path / "data", _env_file=None)  # type: ignore[call-arg]
    settings = Settings(agrag, RetrievalSettings(_env_file=None))  # type: ignore[call-arg]
    with open_runtime([], settings, require_data=False, embedder=embedder) as runtime:
        graph = runtime.store.graph
        assert isinstance(graph, KuzuGraphStore) and graph.relation_index_mode is RelationIndexMode.OFF
        runtime.serve_long()  # what agrag serve and agrag mcp do
        assert graph.relation_index_mode is RelationIndexMode.BACKGROUND
