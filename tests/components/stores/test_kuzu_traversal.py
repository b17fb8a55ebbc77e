from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.data_models.resolution import MERGED, MergeDecision
from agrag.components.errors import RetrievalError, StoreError
from agrag.components.stores.kuzu import query_cypher
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

NAMES = ("Ada", "Babbage", "Notes", "Engine", "Menabrea", "London", "Charles Babbage")
ID = {name: entity_id_for(name) for name in NAMES}
# source, type, target, supporting chunks. "Charles Babbage" is merged into "Babbage".
EDGES = (
    ("Ada", "WORKED_WITH", "Babbage", ("c1", "c2", "c3")),
    ("Ada", "WROTE", "Notes", ("c1", "c2")),
    ("Babbage", "DESIGNED", "Engine", ("c3",)),
    ("Charles Babbage", "LIVED_IN", "London", ("c5",)),
    ("Notes", "TRANSLATES", "Menabrea", ("c2",)),
    ("Menabrea", "DESCRIBED", "Engine", ("c4",)),
    ("Engine", "INSPIRED", "Ada", ("c6",)),
)


def rel(source: str, rel_type: str, target: str) -> str:
    return relation_id_for(ID[source], ID[target], rel_type)


def build_graph(graph: KuzuGraphStore) -> None:
    """Seven entities, one of them merged into another, and seven relations, one of them back to Ada."""
    graph.upsert_entities([Entity(ID[name], name, "Name") for name in NAMES])
    graph.upsert_relations(
        [Relation(rel(a, t, b), ID[a], ID[b], t, chunks, f"{a} {t} {b}") for a, t, b, chunks in EDGES]
    )
    decision = MergeDecision(ID["Charles Babbage"], ID["Babbage"], MERGED, "fuzzy", 90.0, "same person")
    graph.apply_resolution([decision], [], run_id="run1")


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    build_graph(store)
    yield store
    store.close()


def walked(steps: list[tuple[Relation, int]]) -> list[tuple[str, int]]:
    return [(r.type, hop) for r, hop in steps]


def test_one_hop_in_both_directions_ranks_by_support(graph: KuzuGraphStore) -> None:
    steps = graph.traverse([ID["Ada"]])
    assert walked(steps) == [("WORKED_WITH", 1), ("WROTE", 1), ("INSPIRED", 1)]
    first, _ = steps[0]
    assert (first.source_id, first.target_id, first.chunk_ids) == (ID["Ada"], ID["Babbage"], ("c1", "c2", "c3"))


def test_deeper_hops_reach_new_entities_and_never_revisit_the_seed(graph: KuzuGraphStore) -> None:
    steps = graph.traverse([ID["Ada"]], depth=5)
    assert sorted(walked(steps)) == sorted(
        [
            ("WORKED_WITH", 1),
            ("WROTE", 1),
            ("INSPIRED", 1),
            ("DESIGNED", 2),
            ("LIVED_IN", 2),
            ("TRANSLATES", 2),
            ("DESCRIBED", 2),
        ]
    )
    assert len({r.id for r, _ in steps}) == len(steps)
    # Hop 2 expands Babbage, Notes and Engine, never Ada again; Engine-Menabrea joins two hop-1/hop-2 entities.
    assert all(hop == 1 for r, hop in steps if ID["Ada"] in (r.source_id, r.target_id))


def test_direction_out_and_in(graph: KuzuGraphStore) -> None:
    out = graph.traverse([ID["Ada"]], direction="out", depth=2)
    assert walked(out) == [("WORKED_WITH", 1), ("WROTE", 1), *sorted_by_id(["DESIGNED", "LIVED_IN", "TRANSLATES"], 2)]
    into = graph.traverse([ID["Ada"]], direction="in", depth=3)
    # Hop 3 walks into Babbage from Ada, but Ada (reached already) is not expanded again.
    assert walked(into) == [
        ("INSPIRED", 1),
        *sorted_by_id(["DESIGNED", "DESCRIBED"], 2),
        *sorted_by_id(["WORKED_WITH", "TRANSLATES"], 3),
    ]
    with pytest.raises(RetrievalError, match="both, out, in"):
        graph.traverse([ID["Ada"]], direction="sideways")


def sorted_by_id(types: list[str], hop: int) -> list[tuple[str, int]]:
    """Equally supported relations of one hop come in id order."""
    ids = {rel_type: rel(a, rel_type, b) for a, rel_type, b, _ in EDGES}
    return [(t, hop) for t in sorted(types, key=lambda t: ids[t])]


def test_merged_entities_count_as_the_entity_they_resolved_into(graph: KuzuGraphStore) -> None:
    steps = graph.traverse([ID["Charles Babbage"]], relation_types=["LIVED_IN"])
    ((lived_in, hop),) = steps
    assert (lived_in.source_id, lived_in.target_id, hop) == (ID["Babbage"], ID["London"], 1)
    ends = {e for r, _ in graph.traverse([ID["Ada"]], depth=5) for e in (r.source_id, r.target_id)}
    assert ID["Charles Babbage"] not in ends


def test_relation_type_filter_per_hop_cap_and_limit(graph: KuzuGraphStore) -> None:
    assert walked(graph.traverse([ID["Ada"]], ["WORKED_WITH", "DESIGNED"], depth=3)) == [
        ("WORKED_WITH", 1),
        ("DESIGNED", 2),
    ]
    capped = graph.traverse([ID["Ada"]], depth=2, per_hop=1)
    assert walked(capped) == [("WORKED_WITH", 1), sorted_by_id(["DESIGNED", "LIVED_IN"], 2)[0]]
    assert len(graph.traverse([ID["Ada"]], depth=5, limit=4)) == 4
    assert graph.traverse([ID["Ada"]], depth=0) == []
    assert graph.traverse(["e-unknown"], depth=2) == []


def test_relation_types_of_an_entity(graph: KuzuGraphStore) -> None:
    assert graph.relation_types_of(ID["Babbage"]) == {"DESIGNED": 1, "LIVED_IN": 1, "WORKED_WITH": 1}
    assert graph.relation_types_of(ID["Charles Babbage"]) == graph.relation_types_of(ID["Babbage"])
    assert graph.relation_types_of("e-unknown") == {}


def test_find_entities_by_name_gives_resolved_entities(graph: KuzuGraphStore) -> None:
    assert [e.name for e in graph.find_entities_by_name("the BABBAGE")] == ["Babbage"]
    assert [e.id for e in graph.find_entities_by_name("Charles  Babbage")] == [ID["Babbage"]]
    assert graph.find_entities_by_name("Nobody") == []


def test_read_only_query_returns_columns_and_plain_rows(graph: KuzuGraphStore) -> None:
    columns, rows = graph.run_read_only("MATCH (e:Entity) WHERE e.merged_into = '' RETURN count(e) AS n;")
    assert (columns, rows) == (["n"], [[6]])
    _, rows = graph.run_read_only("MATCH (e:Entity) WHERE e.name = $name RETURN e", {"name": "Ada"})
    assert rows[0][0]["name"] == "Ada"
    assert "_id" not in rows[0][0]
    _, rows = graph.run_read_only("MATCH (e:Entity) WHERE e.name <> 'CREATE; DROP' RETURN e.name", max_rows=2)
    assert len(rows) == 2
    columns, _ = graph.run_read_only("CALL show_tables() RETURN *")
    assert "name" in columns


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("MATCH (e:Entity) SET e.name = 'x'", "SET"),
        ("match (e:Entity) detach delete e", "DELETE, DETACH"),
        ("CREATE (:Entity {id: 'x'})", "CREATE"),
        ("MATCH (e:Entity) RETURN e.id; MATCH (e:Entity) RETURN e.name", "more than one statement"),
        ("CALL project_graph('g', ['Entity'], ['RELATED'])", "project_graph"),
        ("COMMIT", "COMMIT"),
        ("  // nothing\n", "empty"),
    ],
)
def test_writes_are_refused_before_they_run(graph: KuzuGraphStore, query: str, reason: str) -> None:
    before = graph.counts()
    with pytest.raises(StoreError, match="must be read-only") as caught:
        graph.run_read_only(query)
    assert reason in str(caught.value)
    assert graph.counts() == before


def test_the_read_only_transaction_refuses_a_write_the_word_check_missed(
    graph: KuzuGraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = graph.counts()
    monkeypatch.setattr(query_cypher, "read_only_problem", lambda query: None)
    with pytest.raises(StoreError, match="read-only transaction"):
        graph.run_read_only("MATCH (e:Entity) SET e.name = 'changed'")
    assert graph.counts() == before
    assert [e.name for e in graph.get_entities([ID["Ada"]])] == ["Ada"]
    graph.upsert_entities([Entity("e-new", "New", "Name")])  # the connection still writes
    assert graph.counts()["Entity"] == before["Entity"] + 1


def test_failed_queries_leave_the_connection_usable(graph: KuzuGraphStore) -> None:
    with pytest.raises(StoreError, match="no value: missing"):
        graph.run_read_only("MATCH (e:Entity) WHERE e.id = $missing RETURN e.id")
    with pytest.raises(StoreError, match="failed"):
        graph.run_read_only("MATCH (e:Entity RETURN e.id")
    with pytest.raises(StoreError, match="failed"):
        graph.run_read_only("MATCH (e:NoSuchTable) RETURN e.id")
    assert graph.run_read_only("MATCH (e:Entity) RETURN count(*)")[1] == [[7]]
    graph.upsert_entities([Entity("e-new", "New", "Name")])
    assert graph.counts()["Entity"] == 8


def test_a_slow_query_is_interrupted(graph: KuzuGraphStore) -> None:
    slow = "UNWIND range(1, 100000) AS i UNWIND range(1, 100000) AS j WITH i, j WHERE i * j = -1 RETURN count(*)"
    with pytest.raises(StoreError, match="longer than 50 ms"):
        graph.run_read_only(slow, timeout_ms=50)
    assert graph.run_read_only("RETURN 1 AS one") == (["one"], [[1]])


def test_schema_text_describes_the_public_tables(graph: KuzuGraphStore) -> None:
    text = graph.schema_text()
    assert "Entity(id STRING PRIMARY KEY, name STRING" in text
    assert "Chunk(" in text
    assert "(:Entity)-[:RELATED {id STRING, type STRING, description STRING, chunk_ids STRING[]}]->(:Entity)" in text
    assert "(:Chunk)-[:MENTIONS {count INT64}]->(:Entity)" in text
    assert "WORKED_WITH" in text
    for internal in ("StoreInfo", "MergeLog", "Candidate"):
        assert internal not in text
