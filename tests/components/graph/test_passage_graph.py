import pytest

from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.graph.passage_graph import PassageGraph

# c1 names Ada and Orion; c2 is about Orion and names Lyon; c3 is about Lyon; c4 names Vega only.
EDGES = PassageEdges(
    mentions=(("c1", "ada"), ("c1", "orion"), ("c2", "lyon"), ("c4", "vega"), ("c5", "orion")),
    about=(("c2", "orion"), ("c3", "lyon")),
)


def test_walk_reaches_the_second_and_third_hop_but_not_unconnected_chunks() -> None:
    mass = PassageGraph(EDGES).personalized_pagerank(["ada"])
    assert set(mass) == {"c1", "c2", "c3", "c5"}
    assert mass["c1"] > mass["c2"] > mass["c3"]  # one, two and three hops from Ada
    assert mass["c2"] > mass["c5"]  # c2 is about Orion, c5 only names it


def test_rare_seeds_weigh_more_than_common_ones() -> None:
    graph = PassageGraph(EDGES)
    assert graph.chunk_count("orion") == 3
    assert graph.chunk_count("ada") == 1
    assert graph.chunk_count("unknown") == 0
    mass = graph.personalized_pagerank(["ada", "orion"])
    assert mass["c1"] == max(mass.values())


def test_no_known_seed_gives_no_mass() -> None:
    graph = PassageGraph(EDGES)
    assert graph.personalized_pagerank(["unknown"]) == {}
    assert "vega" in graph
    assert "unknown" not in graph


def test_mass_is_a_distribution_over_the_graph() -> None:
    graph = PassageGraph(EDGES)
    mass = graph.personalized_pagerank(["vega"], damping=0.85)
    assert set(mass) == {"c4"}
    assert 0 < mass["c4"] < 1
    assert PassageGraph(PassageEdges((), ())).personalized_pagerank(["x"]) == {}


@pytest.mark.parametrize("damping", [0.3, 0.5, 0.85])
def test_ranking_of_hops_holds_across_damping(damping: float) -> None:
    mass = PassageGraph(EDGES).personalized_pagerank(["ada"], damping=damping)
    assert sorted(mass, key=mass.__getitem__, reverse=True)[0] == "c1"


def test_entities_are_found_by_normalized_name_only_when_in_the_graph() -> None:
    edges = PassageEdges(
        mentions=(("c1", "p1"), ("c2", "o1")),
        about=(),
        names=(("jordan lee", "p1"), ("jordan lee", "o1"), ("ghost", "g1")),
    )
    graph = PassageGraph(edges)
    assert graph.entities_named("jordan lee") == ["p1", "o1"]
    assert graph.entities_named("ghost") == []  # no current chunk names it
    assert graph.entities_named("nobody") == []


def test_a_graph_cut_to_documents_equals_the_graph_of_their_edges_alone() -> None:
    edges = PassageEdges(
        mentions=(("da.1", "ada"), ("da.1", "orion"), ("db.1", "orion"), ("db.1", "lyon"), ("dc.1", "vega")),
        about=(("da.2", "orion"), ("db.2", "lyon")),
        names=(("ada", "ada"), ("orion", "orion"), ("lyon", "lyon"), ("vega", "vega")),
    )
    whole = PassageGraph(edges)
    for documents in (["da"], ["db"], ["da", "db"], ["dc"], ["nothing"]):
        cut, alone = whole.within(documents), PassageGraph(edges.within(documents))
        assert len(cut.chunk_ids) == {"da": 2, "db": 2, "dc": 1}.get(documents[0], 0) + 2 * (len(documents) == 2)
        assert (cut.chunk_ids, cut.entity_ids) == (alone.chunk_ids, alone.entity_ids)
        for name in ("ada", "orion", "lyon", "vega"):
            assert cut.entities_named(name) == alone.entities_named(name)
            assert cut.chunk_count(name) == alone.chunk_count(name)
            assert dict(cut.personalized_pagerank([name])) == pytest.approx(dict(alone.personalized_pagerank([name])))
