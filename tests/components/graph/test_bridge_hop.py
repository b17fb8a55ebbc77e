from collections.abc import Mapping, Sequence

import numpy as np

from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.graph.bridge_hop import BridgeHop, BridgeHopSettings
from agrag.components.graph.passage_graph import PassageGraph

# report names the project and a freezer; grant is about the project; minutes name the project too;
# hub is named by every passage; freezer is named by the report alone.
EDGES = PassageEdges(
    mentions=(
        ("report", "project"),
        ("report", "freezer"),
        ("report", "hub"),
        ("report", "station"),
        ("minutes", "project"),
        ("minutes", "hub"),
        ("grant", "hub"),
        ("other", "hub"),
        ("other", "station"),
        ("lab", "hub"),
        ("lab", "station"),
    ),
    about=(("grant", "project"),),
)
VECTORS = {  # unit vectors in a 3-d space: question, project, station
    "grant": (0.6, 0.8, 0.0),
    "minutes": (0.0, 1.0, 0.0),
    "report": (1.0, 0.0, 0.0),
    "other": (0.0, 0.0, 1.0),
    "lab": (0.6, 0.0, 0.8),
}
ENTITY_VECTORS = {"project": (0.0, 1.0, 0.0), "station": (0.0, 0.0, 1.0)}


def similarities(vector: Sequence[float], ids: Sequence[str]) -> Mapping[str, float]:
    return {i: float(np.dot(vector, VECTORS[i])) for i in ids if i in VECTORS}


def entity_vectors(ids: Sequence[str]) -> Mapping[str, Sequence[float]]:
    return {i: ENTITY_VECTORS[i] for i in ids if i in ENTITY_VECTORS}


def test_bridges_are_the_specific_names_of_the_first_passages_that_lead_elsewhere() -> None:
    graph = PassageGraph(EDGES)
    hop = BridgeHop(BridgeHopSettings(first=1, max_bridges=5, max_share=0.6))
    bridges = hop.bridges(graph, ["report"], named=[])
    # freezer leads nowhere else; hub is on all five passages (over 0.6 of them); project and station, on three
    # each, are equally specific and tie by id
    assert [b.entity_id for b in bridges] == ["project", "station"]
    assert bridges[0].chunk_ids == ("grant", "minutes")  # the first passage is not where a bridge leads
    assert bridges[1].chunk_ids == ("lab", "other")
    assert bridges[0].weight == bridges[1].weight == 1 / 3


def test_a_name_the_question_gives_is_no_bridge_and_weights_order_them() -> None:
    graph = PassageGraph(EDGES)
    hop = BridgeHop(BridgeHopSettings(first=1, max_bridges=5, max_share=0.6))
    assert [b.entity_id for b in hop.bridges(graph, ["report"], named=["project"])] == ["station"]
    weighted = hop.bridges(graph, ["report"], named=[], weights={"station": 2.0})
    assert [b.entity_id for b in weighted] == ["station", "project"]
    one = BridgeHop(BridgeHopSettings(max_bridges=1, max_share=0.6)).bridges(graph, ["report"], named=[])
    assert [b.entity_id for b in one] == ["project"]
    assert BridgeHop(BridgeHopSettings(max_share=0.2)).bridges(graph, ["report"], named=[]) == []  # all hubs


def test_the_second_round_asks_the_question_joined_with_the_bridge() -> None:
    graph = PassageGraph(EDGES)
    hop = BridgeHop(BridgeHopSettings(first=1, max_bridges=5, max_share=0.6, entity_weight=1.0))
    bridges = hop.bridges(graph, ["report"], named=[])
    ranked = hop.rank(bridges, (1.0, 0.0, 0.0), similarities, entity_vectors)
    # grant matches question + project best (0.6 + 0.8) / sqrt 2; lab matches question + station (0.6 + 0.8) too,
    # minutes and other only the bridge's half
    assert ranked == ["grant", "lab", "minutes", "other"]


def test_the_keyword_match_to_the_question_joins_the_second_round() -> None:
    graph = PassageGraph(EDGES)
    hop = BridgeHop(BridgeHopSettings(first=1, max_bridges=5, max_share=0.6, entity_weight=1.0))
    bridges = hop.bridges(graph, ["report"], named=[])
    asked: list[Sequence[str]] = []

    def keywords(ids: Sequence[str]) -> list[str]:
        asked.append(ids)
        return ["other", "minutes"]  # "Funder: ..." shares the question's telling word, little of its meaning

    ranked = hop.rank(bridges, (1.0, 0.0, 0.0), similarities, entity_vectors, keywords)
    # asked about the reached passages only, in the dense order; fused by rank (k=5), a passage found both ways
    # (other: last by meaning, first by its words; minutes) leads one found by meaning alone (grant, lab)
    assert asked == [["grant", "lab", "minutes", "other"]]
    assert ranked == ["other", "minutes", "grant", "lab"]


def test_a_question_that_names_nothing_walks_from_the_names_of_its_best_passages() -> None:
    graph = PassageGraph(EDGES)
    hop = BridgeHop(BridgeHopSettings(seed_passages=2))
    assert hop.passage_seeds(graph, ["report", "minutes", "grant"]) == ["freezer", "hub", "project", "station"]
    assert BridgeHop(BridgeHopSettings(seed_passages=1)).passage_seeds(graph, ["lab", "report"]) == ["hub", "station"]
    assert BridgeHop(BridgeHopSettings(seed_passages=0)).passage_seeds(graph, ["report"]) == []
    assert hop.passage_seeds(graph, []) == []


def test_no_bridge_or_no_vector_gives_no_second_round() -> None:
    graph = PassageGraph(EDGES)
    hop = BridgeHop(BridgeHopSettings(first=1, max_share=0.6))
    assert hop.rank([], (1.0, 0.0, 0.0), similarities, entity_vectors) == []
    bridges = hop.bridges(graph, ["report"], named=[])
    assert hop.rank(bridges, (1.0, 0.0, 0.0), similarities, lambda ids: {}) == []
    assert hop.rank(bridges, (1.0, 0.0, 0.0), similarities, lambda ids: {}, lambda ids: ["grant"]) == []
    assert hop.bridges(graph, ["unknown"], named=[]) == []


def test_the_graph_lists_a_chunks_entities_and_an_entitys_chunks() -> None:
    graph = PassageGraph(EDGES)
    assert set(graph.entities_of("report")) == {"project", "freezer", "hub", "station"}
    assert set(graph.chunks_of("project")) == {"report", "minutes", "grant"}
    assert graph.entities_of("unknown") == [] and graph.chunks_of("unknown") == []
