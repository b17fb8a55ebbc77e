"""``GraphEntityLookup`` on a real Kùzu store (the graph contract's corpus) and real Qdrant Edge entity vectors."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.data_models.resolution import MERGED, MergeDecision, ResolutionRule
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.graph.graph_entity_lookup import GraphEntityLookup
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.vector_payloads import entity_payload
from agrag.components.stores.vector_store import VectorCollection, VectorPoint
from tests.components.stores.graph_contract import GRAPH_BACKENDS, ID, NAMES, write_corpus

MARIA, ORION, ACME, VEGA = ID["Maria Chen"], ID["Orion Planner"], ID["Acme Robotics"], ID["Vega Perception"]
ONLY_A, ONLY_B, EVERY = EvidenceScope(("a",)), EvidenceScope(("b",)), EvidenceScope()
DIM = 8


def axis(position: int) -> list[float]:
    """A unit vector along one axis: each entity gets its own, so the nearest one is known."""
    return [1.0 if i == position else 0.0 for i in range(DIM)]


@pytest.fixture(params=sorted(GRAPH_BACKENDS))
def graph(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    """The contract corpus: Maria Chen in documents a and b, Orion Planner in a, Acme Robotics in b."""
    store = GRAPH_BACKENDS[request.param](tmp_path)
    write_corpus(store)
    yield store
    store.close()


@pytest.fixture
def entities(tmp_path: Path) -> Iterator[QdrantEdgeVectorStore]:
    """The entity vectors of the corpus, one axis per entity."""
    store = QdrantEdgeVectorStore(tmp_path / "entities", VectorCollection.ENTITIES, DIM)
    store.upsert(
        [
            VectorPoint(ID[name], axis(position), f"{name} {label}", entity_payload(Entity(ID[name], name, label, "")))
            for position, (name, label) in enumerate(NAMES.items())
        ]
    )
    yield store
    store.close()


def names(found: list[Entity]) -> list[str]:
    return [e.name for e in found]


def test_an_id_is_resolved_before_a_name(graph: GraphStore) -> None:
    lookup = GraphEntityLookup(graph)
    assert [e.id for e in lookup.resolve(ORION)] == [ORION]
    assert [e.id for e in lookup.resolve(ORION, ONLY_A)] == [ORION]
    assert [e.id for e in lookup.resolve(ORION, EVERY)] == [ORION]
    assert lookup.with_ids([ACME, "e-unknown", MARIA]) == graph.get_entities([ACME, MARIA])


def test_an_exact_name_is_resolved_after_normalization(graph: GraphStore) -> None:
    lookup = GraphEntityLookup(graph)
    assert names(lookup.resolve("maria  CHEN")) == ["Maria Chen"]
    assert names(lookup.resolve("Maria Chen", ONLY_B)) == ["Maria Chen"]
    assert names(lookup.resolve("Orion Planner", EVERY)) == ["Orion Planner"]
    assert lookup.resolve("Orion Plan") == [], "a name matches whole, never by similarity"


def test_a_scope_hides_ids_and_names_only_other_documents_use(graph: GraphStore) -> None:
    lookup = GraphEntityLookup(graph)
    assert lookup.resolve(ORION, ONLY_B) == [], "Orion Planner is named in document a only"
    assert lookup.resolve("Orion Planner", ONLY_B) == []
    assert lookup.resolve("Acme Robotics", ONLY_A) == []
    assert names(lookup.resolve("Acme Robotics", ONLY_B)) == ["Acme Robotics"]
    assert lookup.resolve(ACME, EvidenceScope(())) == [], "an empty scope sees nothing"


def test_an_unknown_key_finds_nothing_in_every_view(graph: GraphStore) -> None:
    lookup = GraphEntityLookup(graph)
    for scope in (None, EVERY, ONLY_A):
        assert lookup.resolve("nobody at all", scope) == []
        assert lookup.resolve("e-0000000000000000", scope) == []
    assert lookup.exact("nobody at all") is None


def test_a_merged_id_is_its_record_store_wide_and_its_resolved_entity_in_a_scope(graph: GraphStore) -> None:
    graph.apply_resolution([MergeDecision(VEGA, ORION, MERGED, ResolutionRule.FUZZY, 91.0, "alike")], [], "r1")
    lookup = GraphEntityLookup(graph)
    assert [e.id for e in lookup.resolve(VEGA)] == [VEGA], "retrieval reads the stored record"
    scoped = lookup.resolve(VEGA, ONLY_B)
    assert [e.id for e in scoped] == [ORION]
    assert names(scoped) == ["Vega Perception"], "document b names the merged entity by the record it mentions"


def test_exact_applies_labels_properties_and_the_documents_of_the_filters(graph: GraphStore) -> None:
    lookup = GraphEntityLookup(graph)
    maria = lookup.exact("maria chen")
    assert maria is not None and maria.id == MARIA
    assert lookup.exact("Maria Chen", SearchFilters(labels=("Person",))) == maria
    assert lookup.exact("Maria Chen", SearchFilters(labels=("Org",))) is None
    assert lookup.exact("Maria Chen", SearchFilters(properties={"label": "Product"})) is None
    assert lookup.exact("Orion Planner", SearchFilters(document_ids=("b",))) is None
    found = lookup.exact("Orion Planner", SearchFilters(document_ids=("a",)))
    assert found is not None and found.id == ORION


def test_nearest_is_the_entity_search_top_hit_within_the_filters(
    graph: GraphStore, entities: QdrantEdgeVectorStore
) -> None:
    lookup = GraphEntityLookup(graph, entities)
    position = {name: i for i, name in enumerate(NAMES)}
    near_orion = Embedding(tuple(axis(position["Orion Planner"])))
    nearest = lookup.nearest("Orion Planer", near_orion)
    assert nearest is not None and nearest.id == ORION
    # Within document b the Orion Planner is not there: the top hit is another entity b names.
    in_b = lookup.nearest("Orion Planer", near_orion, SearchFilters(document_ids=("b",)))
    assert in_b is not None and in_b.id in {MARIA, ACME, VEGA}
    assert lookup.nearest("Orion Planer", near_orion, SearchFilters(labels=("Nothing",))) is None


def test_nearest_without_the_entity_vectors_is_a_config_error(graph: GraphStore) -> None:
    with pytest.raises(ComponentConfigError, match="GraphEntityLookup: nearest needs the entity vectors"):
        GraphEntityLookup(graph).nearest("Orion", Embedding(tuple(axis(0))))
