from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.search_result import SearchResult
from agrag.components.expanders.graph_bfs_expander import GraphBfsExpander
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from tests.components.stores.test_kuzu_traversal import ID, build_graph


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    build_graph(store)
    yield store
    store.close()


def hit(item: Entity | Chunk, score: float = 0.5) -> SearchResult:
    return SearchResult(item, score, "entity", ("entity",))


def expand(
    expander: GraphBfsExpander,
    results: list[SearchResult],
    relation_types: list[str] | None = None,
    depth: int | None = None,
) -> list[SearchResult]:
    out = expander.run(results=results, relation_types=relation_types, depth=depth)
    status = out["status"]
    assert isinstance(status, MethodStatus)
    assert status.ok, status.error
    found = out["results"]
    assert isinstance(found, list)
    return found


def names(results: list[SearchResult]) -> list[str]:
    return [r.item.name if isinstance(r.item, Entity) else getattr(r.item, "type", "") for r in results]


def test_walks_from_the_entity_hits_and_leaves_the_seeds_out(graph: KuzuGraphStore) -> None:
    chunk = Chunk("c1", "d1", "v1", "Ada met Babbage.", (), 0, 0, 16)
    incoming = [hit(chunk), hit(Entity(ID["Ada"], "Ada", "Name"))]
    results = expand(GraphBfsExpander(graph, depth=1), incoming)
    # Hop 1, most supported first; an entity ranks with the relations that reached it.
    assert names(results) == ["Babbage", "WORKED_WITH", "Notes", "WROTE", "Engine", "INSPIRED"]
    assert {r.method for r in results} == {"bfs"}
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert ID["Ada"] not in {r.item.id for r in results}


def test_depth_relation_types_and_limit(graph: KuzuGraphStore) -> None:
    seeds = [hit(Entity(ID["Ada"], "Ada", "Name")), hit(Entity(ID["Babbage"], "Babbage", "Name"))]
    expander = GraphBfsExpander(graph, depth=1, limit=50)
    deep = expand(expander, seeds, relation_types=["WROTE", "TRANSLATES"], depth=2)
    assert names(deep) == ["Notes", "WROTE", "Menabrea", "TRANSLATES"]
    both = names(expand(expander, seeds))
    assert "Babbage" not in both
    assert "WORKED_WITH" in both  # a relation between two seeds is still news
    assert len(expand(GraphBfsExpander(graph, depth=3, limit=3), seeds)) == 3
    assert "Babbage" in names(expand(GraphBfsExpander(graph, depth=1, seeds=1), seeds))


def test_no_entity_hits_give_nothing(graph: KuzuGraphStore) -> None:
    assert expand(GraphBfsExpander(graph), [hit(Chunk("c1", "d1", "v1", "x", (), 0, 0, 1))]) == []


def test_a_store_failure_is_reported_not_raised(graph: KuzuGraphStore) -> None:
    graph.close()
    out = GraphBfsExpander(graph).run(results=[hit(Entity(ID["Ada"], "Ada", "Name"))])
    status = out["status"]
    assert isinstance(status, MethodStatus)
    assert out["results"] == []
    assert (status.ok, status.method) == (False, "bfs")
    assert status.error.startswith("StoreError")


def test_relations_carry_resolved_ends(graph: KuzuGraphStore) -> None:
    found = expand(GraphBfsExpander(graph, depth=2), [hit(Entity(ID["Babbage"], "Babbage", "Name"))])
    relations = [r.item for r in found if isinstance(r.item, Relation)]
    lived_in = next(r for r in relations if r.type == "LIVED_IN")
    assert lived_in.source_id == ID["Babbage"]


def test_a_relation_stated_by_many_chunks_offers_those_linked_most_then_the_first_ids() -> None:
    from agrag.components.expanders.graph_bfs_expander import CHUNKS_PER_RELATION, _most_linked

    chunk_ids = [f"c{n:03d}" for n in range(120)]
    links = dict.fromkeys(chunk_ids, 1) | {"c110": 3, "c050": 2, "c119": 2}
    offered = _most_linked(chunk_ids, links)
    assert len(offered) == CHUNKS_PER_RELATION == 50
    assert offered[:3] == ["c110", "c050", "c119"]  # linked most, then by id
    assert offered[3:] == [c for c in chunk_ids if links[c] == 1][:47]
    assert _most_linked(chunk_ids[:10], links) == chunk_ids[:10]  # a few chunks are all offered


def test_the_entities_of_one_name_are_one_seed_and_a_date_seeds_only_when_asked(graph: KuzuGraphStore) -> None:
    from agrag.components.expanders.graph_bfs_expander import seed_entities

    ada_person, ada_name = Entity("ada-person", "Ada", "Person"), Entity("ada-name", "Ada", "Name")
    may, babbage = Entity("may-2025", "May 2025", "Date"), Entity("babbage", "Babbage", "Person")
    found = [hit(ada_person), hit(ada_name), hit(may), hit(babbage)]
    # Two seeds: Ada (both entities) and Babbage; the date was found for its closeness, not asked for.
    assert seed_entities(found, 2, "Who worked with Ada?") == ["ada-person", "ada-name", "babbage"]
    assert seed_entities(found, 2, "What did Ada do in May 2025?") == ["ada-person", "ada-name", "may-2025"]
    assert seed_entities(found, 1) == ["ada-person", "ada-name"]
    out = GraphBfsExpander(graph, depth=1, seeds=1).run(
        results=[hit(Entity("date-1", "1842", "Date")), hit(Entity(ID["Ada"], "Ada", "Name"))], query="Who is Ada?"
    )
    assert "Babbage" in names(out["results"])  # the walk started from Ada, the date skipped
