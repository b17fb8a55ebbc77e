import itertools
import random

import pytest

from agrag.components.communities.leiden_community_detector import LeidenCommunityDetector, weighted_graph
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.community import Community, community_id_for

Edge = tuple[str, str, float]


def clique(names: list[str], weight: float = 1.0) -> list[Edge]:
    return [(a, b, weight) for a, b in itertools.combinations(names, 2)]


def names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i:02d}" for i in range(n)]


def detect(entity_ids: list[str], edges: list[Edge], **settings: int | float) -> list[Community]:
    return LeidenCommunityDetector(**settings).run(entity_ids=entity_ids, edges=edges)["communities"]  # type: ignore[arg-type]


def member_sets(communities: list[Community], level: int) -> set[frozenset[str]]:
    return {frozenset(c.entity_ids) for c in communities if c.level == level}


def test_two_cliques_joined_by_a_weak_edge_are_two_communities() -> None:
    left, right = names("a", 5), names("b", 5)
    edges = [*clique(left, 5.0), *clique(right, 5.0), (left[0], right[0], 0.1)]
    communities = detect(left + right, edges)
    assert member_sets(communities, 0) == {frozenset(left), frozenset(right)}
    assert all(c.level == 0 and c.parent_id is None for c in communities)
    for community in communities:
        assert community.entity_ids == tuple(sorted(community.entity_ids))
        assert community.id == community_id_for(0, community.entity_ids)
        assert community.report is None


def test_community_larger_than_max_cluster_size_splits_at_the_next_level() -> None:
    # Three 6-cliques tied by two edges each form one 18-member community of the whole graph: next to the large
    # 40-clique, merging them raises modularity (the resolution limit). On their own subgraph, they fall apart.
    groups = [names(p, 6) for p in ("x", "y", "z")]
    edges = [e for g in groups for e in clique(g)]
    for g, h in itertools.combinations(groups, 2):
        edges += [(g[0], h[0], 1.0), (g[1], h[1], 1.0)]
    big = names("w", 40)
    edges += clique(big)
    everyone = [n for g in groups for n in g] + big
    communities = detect(everyone, edges, max_cluster_size=12)
    merged = frozenset(n for g in groups for n in g)
    assert member_sets(communities, 0) == {merged, frozenset(big)}
    parent = next(c for c in communities if c.level == 0 and frozenset(c.entity_ids) == merged)
    children = [c for c in communities if c.level == 1]
    assert {frozenset(c.entity_ids) for c in children} == {frozenset(g) for g in groups}
    assert {c.parent_id for c in children} == {parent.id}
    # The 40-clique is larger than max_cluster_size too, but Leiden keeps a clique whole: it stays a leaf.
    assert all(not set(big) & set(c.entity_ids) for c in children)


def test_levels_stop_at_max_levels() -> None:
    groups = [names(p, 6) for p in ("x", "y", "z")]
    edges = [e for g in groups for e in clique(g)]
    for g, h in itertools.combinations(groups, 2):
        edges += [(g[0], h[0], 1.0), (g[1], h[1], 1.0)]
    edges += clique(names("w", 40))
    everyone = sorted({n for e in edges for n in e[:2]})
    assert {c.level for c in detect(everyone, edges, max_cluster_size=12, max_levels=1)} == {0}


def test_min_size_drops_small_communities_and_isolated_entities_are_ignored() -> None:
    triangle, pair = names("t", 3), names("p", 2)
    edges = [*clique(triangle), *clique(pair)]
    entity_ids = [*triangle, *pair, "lonely"]
    assert member_sets(detect(entity_ids, edges, min_size=2), 0) == {frozenset(triangle), frozenset(pair)}
    assert member_sets(detect(entity_ids, edges, min_size=3), 0) == {frozenset(triangle)}
    assert all("lonely" not in c.entity_ids for c in detect(entity_ids, edges, min_size=1))


def test_min_size_applies_at_every_level() -> None:
    groups = [names("x", 6), names("y", 6), names("z", 2)]
    edges = [e for g in groups for e in clique(g)]
    for g, h in itertools.combinations(groups, 2):
        edges += [(g[0], h[0], 1.0), (g[1], h[1], 1.0)]
    edges += clique(names("w", 40))
    everyone = sorted({n for e in edges for n in e[:2]})
    pair = frozenset(groups[2])
    assert pair in member_sets(detect(everyone, edges, max_cluster_size=10, min_size=2), 1)
    communities = detect(everyone, edges, max_cluster_size=10, min_size=3)
    assert member_sets(communities, 1) == {frozenset(groups[0]), frozenset(groups[1])}
    assert all(len(c.entity_ids) >= 3 for c in communities)


def test_same_input_in_any_order_gives_the_same_communities() -> None:
    rng = random.Random(7)
    entity_ids = names("n", 80)
    edges = [(rng.choice(entity_ids), rng.choice(entity_ids), float(rng.randint(1, 3))) for _ in range(300)]
    first = detect(entity_ids, edges, max_cluster_size=8)
    assert detect(entity_ids, edges, max_cluster_size=8) == first
    shuffled_ids = entity_ids[:]
    rng.shuffle(shuffled_ids)
    flipped = [(b, a, w) if rng.random() < 0.5 else (a, b, w) for a, b, w in edges]
    rng.shuffle(flipped)
    assert detect(shuffled_ids, flipped, max_cluster_size=8) == first


def test_output_order_and_hierarchy_invariants() -> None:
    rng = random.Random(3)
    entity_ids = names("n", 200)
    edges = [(rng.choice(entity_ids), rng.choice(entity_ids), 1.0) for _ in range(700)]
    communities = detect(entity_ids, edges, max_cluster_size=10)
    assert communities == sorted(communities, key=lambda c: (c.level, -len(c.entity_ids), c.id))
    by_id = {c.id: c for c in communities}
    assert len(by_id) == len(communities)
    for community in communities:
        assert community.id == community_id_for(community.level, community.entity_ids)
        if community.level == 0:
            assert community.parent_id is None
        else:
            parent = by_id[community.parent_id or ""]
            assert parent.level == community.level - 1
            assert len(parent.entity_ids) > 10
            assert set(community.entity_ids) < set(parent.entity_ids)
    level0 = [e for c in communities if c.level == 0 for e in c.entity_ids]
    assert len(level0) == len(set(level0))  # a partition: each entity in one community per level


def test_weighted_graph_sums_parallel_edges_and_drops_self_loops_and_bad_edges() -> None:
    edges = [("b", "a", 0.5), ("a", "b", 0.25), ("a", "a", 3.0), ("a", "c", 0.0), ("a", "unknown", 1.0)]
    node_names, graph = weighted_graph(["a", "b", "c"], edges)
    assert node_names == ["a", "b"]
    assert graph.ecount() == 1
    assert graph.es["weight"] == [0.75]


def test_empty_graph_has_no_communities() -> None:
    assert detect([], []) == []
    assert detect(["a", "b"], []) == []


def test_scale_smoke() -> None:
    rng = random.Random(0)
    entity_ids = [f"e{i:05d}" for i in range(5000)]
    edges = [(rng.choice(entity_ids), rng.choice(entity_ids), 1.0) for _ in range(20000)]
    communities = detect(entity_ids, edges)
    assert communities
    assert {c.level for c in communities} <= {0, 1, 2}
    assert all(len(c.entity_ids) >= 2 for c in communities)


@pytest.mark.parametrize(
    "settings",
    [{"max_levels": 0}, {"max_cluster_size": 1}, {"min_size": 0}, {"resolution": 0.0}, {"resolution": float("nan")}],
)
def test_settings_out_of_range_are_refused(settings: dict[str, float]) -> None:
    with pytest.raises(ComponentConfigError):
        LeidenCommunityDetector(**settings)  # type: ignore[arg-type]
