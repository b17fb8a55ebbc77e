"""Entity and relation reads within a document scope, applied in Kùzu's query, on a real database file.

Two documents: A (version v1 superseded by v2) and B. Entities named only in A, only in B, in both, one only in A's
superseded chunk (``Ghost``), and ``Gamma Ltd`` merged into ``Gamma``: the member is named in A and B, Gamma only in B.
"""

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.data_models.resolution import MERGED, MergeDecision
from agrag.components.stores import kuzu_cypher
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

A_OLD = Document("A", "v1", "Doc A", "a.md")
A_NEW = Document("A", "v2", "Doc A", "a.md")
B_DOC = Document("B", "v1", "Doc B", "b.md")

A1_0 = chunk_id_for("A", "v1", 0)  # superseded
A2_0, A2_1, A2_2 = (chunk_id_for("A", "v2", i) for i in range(3))
B1_0, B1_1 = (chunk_id_for("B", "v1", i) for i in range(2))

NAMES = ("Alpha", "Beta", "Shared", "Gamma", "Gamma Ltd", "Ghost")
ID = {name: entity_id_for(name) for name in NAMES}

# (chunk, entity, count): mentions. Alpha's superseded mention (5) must never count.
MENTIONS = (
    (A1_0, "Alpha", 5),
    (A1_0, "Ghost", 1),
    (A2_0, "Alpha", 1),
    (A2_1, "Alpha", 3),
    (A2_1, "Shared", 1),
    (A2_0, "Gamma Ltd", 2),
    (B1_0, "Beta", 1),
    (B1_0, "Shared", 2),
    (B1_0, "Gamma", 2),
    (B1_1, "Gamma", 1),
    (B1_1, "Gamma Ltd", 2),  # with Gamma's own mention, 3 in B1_1 for Gamma: more than B1_0's 2
)
ABOUT = ((A2_2, "Alpha"), (B1_1, "Shared"))

# name: (source, type, target, supporting chunks).
RELATIONS = {
    "only_a": ("Alpha", "WORKS_WITH", "Shared", (A2_1,)),
    "only_b": ("Beta", "WORKS_WITH", "Shared", (B1_0,)),
    "both": ("Shared", "PART_OF", "Gamma Ltd", (A2_0, B1_1)),
    "superseded": ("Alpha", "PRECEDED", "Shared", (A1_0,)),
    "empty": ("Alpha", "EMPTY", "Beta", ()),
    "a_hop_2": ("Shared", "MENTORS", "Gamma", (A1_0, A2_0)),
    "b_hop_2": ("Gamma", "OWNS", "Shared", (B1_1,)),
    "to_ghost": ("Alpha", "KNEW", "Ghost", (A2_0,)),
}
REL_ID = {key: relation_id_for(ID[s], ID[t], rel_type) for key, (s, rel_type, t, _) in RELATIONS.items()}
KEY_OF = {rel_id: key for key, rel_id in REL_ID.items()}

EVERY_SCOPE = [["A"], ["B"], ["A", "B"], [], None]


def chunks_of(doc: Document, count: int) -> list[Chunk]:
    return [
        Chunk(
            chunk_id_for(doc.id, doc.version, i), doc.id, doc.version, f"text {i}", (doc.title,), i, 10 * i, 10 * i + 6
        )
        for i in range(count)
    ]


def build(graph: KuzuGraphStore) -> None:
    for doc, count in ((A_OLD, 1), (A_NEW, 3), (B_DOC, 2)):
        chunks = chunks_of(doc, count)
        graph.write_chunks([doc], chunks)
        graph.commit_documents([(doc, len(chunks))])
    graph.upsert_entities([Entity(ID[name], name, "Name") for name in NAMES])
    graph.upsert_mentions([Mention(chunk, ID[name], count) for chunk, name, count in MENTIONS])
    graph.upsert_about([Mention(chunk, ID[name], 1) for chunk, name in ABOUT])
    graph.upsert_relations(
        [
            Relation(REL_ID[key], ID[s], ID[t], rel_type, chunks, f"{s} {rel_type} {t}")
            for key, (s, rel_type, t, chunks) in RELATIONS.items()
        ]
    )
    decision = MergeDecision(ID["Gamma Ltd"], ID["Gamma"], MERGED, "fuzzy", 90.0, "same company")
    graph.apply_resolution([decision], [], run_id="run1")


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    build(store)
    yield store
    store.close()


def names(entities: Sequence[Entity]) -> list[str]:
    return [e.name for e in entities]


def walk(steps: Sequence[tuple[Relation, int, list[str]]]) -> list[tuple[str, int, list[str]]]:
    return [(KEY_OF[r.id], hop, chunks) for r, hop, chunks in steps]


def by_id(*keys: str) -> list[str]:
    return sorted(keys, key=lambda key: REL_ID[key])


def test_the_adapter_still_satisfies_the_graph_store_interface(graph: KuzuGraphStore) -> None:
    assert isinstance(graph, GraphStore)


def test_the_fixture_keeps_the_superseded_chunk_and_the_empty_relation(graph: KuzuGraphStore) -> None:
    assert [c.current for c in graph.get_chunks([A1_0, A2_0])] == [False, True]
    assert {r.id: r.chunk_ids for r in graph.relations_of(ID["Alpha"])}[REL_ID["empty"]] == ()


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        (["A"], ["Gamma Ltd", "Alpha", "Shared"]),  # Gamma through its member, the only name A uses (issue 15)
        (["B"], ["Beta", "Gamma", "Shared"]),
        (["A", "B"], ["Beta", "Gamma", "Alpha", "Shared"]),
        (["A", "C"], ["Gamma Ltd", "Alpha", "Shared"]),  # an unknown document adds nothing
        ([], []),
        (None, ["Beta", "Gamma", "Alpha", "Shared"]),  # Ghost: only a superseded chunk names it
    ],
)
def test_visible_entities_are_resolved_deduplicated_and_in_the_order_asked(
    graph: KuzuGraphStore, scope: list[str] | None, expected: list[str]
) -> None:
    asked = [ID[n] for n in ("Beta", "Gamma Ltd", "Alpha", "Shared", "Ghost", "Gamma", "Alpha")] + ["e-unknown"]
    found = graph.visible_entities(asked, scope)
    assert names(found) == expected
    resolved = {name: ID["Gamma" if name == "Gamma Ltd" else name] for name in NAMES}
    assert all(e.id == resolved[e.name] for e in found), "a member comes back as its resolved entity"


def test_a_resolved_entity_is_visible_through_its_member_and_the_member_through_it(graph: KuzuGraphStore) -> None:
    # Only the member is named in A, so A calls the resolved entity by the member's name (issue 15, defect 2).
    assert [(e.id, e.name) for e in graph.visible_entities([ID["Gamma"]], ["A"])] == [(ID["Gamma"], "Gamma Ltd")]
    assert names(graph.visible_entities([ID["Gamma Ltd"]], ["B"])) == ["Gamma"]
    assert graph.visible_entities([], None) == []
    assert graph.visible_entities([ID["Ghost"]], ["A"]) == []


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        (
            None,
            {"Alpha": [A2_2, A2_1, A2_0], "Beta": [B1_0], "Shared": [B1_1, B1_0, A2_1], "Gamma": [B1_1, A2_0, B1_0]},
        ),
        (["A"], {"Alpha": [A2_2, A2_1, A2_0], "Shared": [A2_1], "Gamma": [A2_0]}),
        (["B"], {"Beta": [B1_0], "Shared": [B1_1, B1_0], "Gamma": [B1_1, B1_0]}),
        (
            ["A", "B"],
            {"Alpha": [A2_2, A2_1, A2_0], "Beta": [B1_0], "Shared": [B1_1, B1_0, A2_1], "Gamma": [B1_1, A2_0, B1_0]},
        ),
        ([], {}),
    ],
)
def test_support_in_scope_lists_current_in_scope_chunks_best_first(
    graph: KuzuGraphStore, scope: list[str] | None, expected: dict[str, list[str]]
) -> None:
    """About first, then most mentions (a member's added to its entity's in the same chunk), then id."""
    support = graph.entity_support_in_scope([ID[n] for n in NAMES], scope)
    assert support == {ID[name]: chunks for name, chunks in expected.items()}
    assert A1_0 not in {c for chunks in support.values() for c in chunks}, "a superseded chunk supports nothing"


def test_support_is_capped_and_keyed_by_the_resolved_entity(graph: KuzuGraphStore) -> None:
    assert graph.entity_support_in_scope([ID["Alpha"]], ["A"], per_entity=2) == {ID["Alpha"]: [A2_2, A2_1]}
    assert graph.entity_support_in_scope([ID["Alpha"]], ["A"], per_entity=0) == {}
    assert graph.entity_support_in_scope([ID["Gamma Ltd"]], ["A"]) == {ID["Gamma"]: [A2_0]}
    assert graph.entity_support_in_scope([ID["Gamma Ltd"], ID["Gamma"]], ["B"], per_entity=1) == {ID["Gamma"]: [B1_1]}
    assert graph.entity_support_in_scope([ID["Ghost"], "e-unknown"], None) == {}
    assert graph.entity_support_in_scope([], None) == {}


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        # The superseded relation is crossed inside A, as a path: its only chunk is A's, but no longer current.
        (["A"], [("only_a", 1, [A2_1]), ("superseded", 1, [])]),
        (["B"], []),  # Alpha is not visible in B
        (["A", "B"], [("only_a", 1, [A2_1]), ("superseded", 1, [])]),
        ([], []),
        # Without a scope there is no visibility filter: the relation to Ghost is crossed too.
        (
            None,
            [
                *[(k, 1, [A2_1] if k == "only_a" else [A2_0]) for k in by_id("only_a", "to_ghost")],
                ("superseded", 1, []),
            ],
        ),
    ],
)
def test_one_hop_from_alpha_in_each_scope(
    graph: KuzuGraphStore, scope: list[str] | None, expected: list[tuple[str, int, list[str]]]
) -> None:
    steps = graph.scoped_relations([ID["Alpha"]], scope)
    assert walk(steps) == expected
    assert REL_ID["empty"] not in {r.id for r, _, _ in steps}, "a relation without chunk ids is never crossed"


def test_relations_keep_all_their_chunk_ids_and_resolved_ends(graph: KuzuGraphStore) -> None:
    steps = {KEY_OF[r.id]: (r, chunks) for r, _, chunks in graph.scoped_relations([ID["Shared"]], ["A", "B"])}
    both, shown = steps["both"]
    assert (both.source_id, both.target_id, both.type, both.chunk_ids) == (
        ID["Shared"],
        ID["Gamma"],
        "PART_OF",
        (A2_0, B1_1),
    )
    assert shown == [A2_0, B1_1]
    a_hop_2, shown = steps["a_hop_2"]
    assert (a_hop_2.chunk_ids, shown) == ((A1_0, A2_0), [A2_0]), "the superseded chunk is not among the shown ones"


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        (["A"], {"only_a": [A2_1], "superseded": [], "a_hop_2": [A2_0]}),
        (["B"], {"only_b": [B1_0], "b_hop_2": [B1_1]}),
        (
            ["A", "B"],
            {
                "only_a": [A2_1],
                "superseded": [],
                "a_hop_2": [A2_0],
                "only_b": [B1_0],
                "b_hop_2": [B1_1],
                "both": [A2_0, B1_1],
            },
        ),
        ([], {}),
        (
            None,
            {
                "only_a": [A2_1],
                "superseded": [],
                "a_hop_2": [A2_0],
                "only_b": [B1_0],
                "b_hop_2": [B1_1],
                "both": [A2_0, B1_1],
            },
        ),
    ],
)
def test_which_relations_of_shared_each_scope_crosses(
    graph: KuzuGraphStore, scope: list[str] | None, expected: dict[str, list[str]]
) -> None:
    """A relation any out-of-scope document supports is not crossed, even if an in-scope one supports it too."""
    steps = graph.scoped_relations([ID["Shared"]], scope)
    assert {KEY_OF[r.id]: chunks for r, _, chunks in steps} == expected
    assert all(hop == 1 for _, hop, _ in steps)


def test_most_current_in_scope_chunks_come_first_within_a_hop(graph: KuzuGraphStore) -> None:
    steps = walk(graph.scoped_relations([ID["Shared"]], ["A", "B"]))
    assert [key for key, _, _ in steps] == [
        "both",  # two chunks shown
        "a_hop_2",  # one shown, two chunk ids
        *by_id("only_a", "only_b", "b_hop_2"),  # one of one
        "superseded",  # none shown
    ]


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        (["A"], [("only_a", 1, [A2_1]), ("superseded", 1, []), ("a_hop_2", 2, [A2_0])]),
        (
            ["A", "B"],
            [
                ("only_a", 1, [A2_1]),
                ("superseded", 1, []),
                ("both", 2, [A2_0, B1_1]),
                ("a_hop_2", 2, [A2_0]),
                *[(k, 2, [B1_0] if k == "only_b" else [B1_1]) for k in by_id("only_b", "b_hop_2")],
            ],
        ),
    ],
)
def test_depth_two_expands_the_entities_the_first_hop_reached(
    graph: KuzuGraphStore, scope: list[str], expected: list[tuple[str, int, list[str]]]
) -> None:
    steps = graph.scoped_relations([ID["Alpha"]], scope, depth=2)
    assert walk(steps) == expected
    assert len({r.id for r, _, _ in steps}) == len(steps)


def test_depth_two_from_beta_in_b(graph: KuzuGraphStore) -> None:
    assert walk(graph.scoped_relations([ID["Beta"]], ["B"], depth=3)) == [("only_b", 1, [B1_0]), ("b_hop_2", 2, [B1_1])]


def test_relation_types_per_hop_and_limit(graph: KuzuGraphStore) -> None:
    typed = graph.scoped_relations([ID["Alpha"]], ["A", "B"], relation_types=["WORKS_WITH"], depth=2)
    assert walk(typed) == [("only_a", 1, [A2_1]), ("only_b", 2, [B1_0])]
    assert graph.scoped_relations([ID["Alpha"]], ["A"], relation_types=["WORKS_WITH"], depth=2) == typed[:1]
    capped = graph.scoped_relations([ID["Alpha"]], ["A", "B"], depth=2, per_hop=1)
    assert walk(capped) == [("only_a", 1, [A2_1]), ("both", 2, [A2_0, B1_1])]
    limited = graph.scoped_relations([ID["Alpha"]], ["A", "B"], depth=2, limit=3)
    assert walk(limited) == [("only_a", 1, [A2_1]), ("superseded", 1, []), ("both", 2, [A2_0, B1_1])]


def test_seeds_that_are_not_visible_give_nothing(graph: KuzuGraphStore) -> None:
    assert graph.scoped_relations([ID["Beta"]], ["A"], depth=3) == []
    assert graph.scoped_relations([ID["Alpha"]], ["B"], depth=3) == []
    assert graph.scoped_relations([ID["Ghost"]], ["A"], depth=3) == [], "named only in a superseded chunk"
    assert graph.scoped_relations(["e-unknown"], None) == []
    assert graph.scoped_relations([ID["Shared"]], [], depth=3) == []


def test_a_member_seed_starts_from_its_resolved_entity(graph: KuzuGraphStore) -> None:
    assert walk(graph.scoped_relations([ID["Gamma Ltd"]], ["A"])) == [("a_hop_2", 1, [A2_0])]
    both_ways = graph.scoped_relations([ID["Gamma Ltd"], ID["Gamma"]], ["B"])
    assert walk(both_ways) == [("b_hop_2", 1, [B1_1])]


def test_an_end_that_is_not_visible_stops_the_relation(graph: KuzuGraphStore) -> None:
    """Every chunk of Alpha-KNEW-Ghost is A's and current, but no current chunk names Ghost."""
    assert REL_ID["to_ghost"] not in {r.id for r, _, _ in graph.scoped_relations([ID["Alpha"]], ["A"], depth=2)}
    assert walk(graph.scoped_relations([ID["Ghost"]], None)) == [("to_ghost", 1, [A2_0])]


def test_retired_chunks_take_the_path_away(graph: KuzuGraphStore) -> None:
    graph.retire_chunks([A1_0])
    assert walk(graph.scoped_relations([ID["Alpha"]], ["A"])) == [("only_a", 1, [A2_1])]


def test_a_lone_document_id_is_not_taken_for_a_scope(graph: KuzuGraphStore) -> None:
    with pytest.raises(TypeError, match="sequence of document ids"):
        graph.scoped_relations([ID["Alpha"]], "A")
    with pytest.raises(TypeError, match="sequence of document ids"):
        graph.visible_entities([ID["Alpha"]], "A")
    with pytest.raises(TypeError, match="sequence of document ids"):
        graph.entity_support_in_scope([ID["Alpha"]], "A")


def test_kuzu_itself_returns_nothing_out_of_scope(graph: KuzuGraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every row Kùzu returns within scope B is B's: nothing is read only to be filtered out afterwards."""
    returned: list[tuple[str, list[list[Any]]]] = []
    run = graph._run

    def spy(query: str, params: Any = None) -> list[list[Any]]:
        rows = run(query, params)
        returned.append((query, rows))
        return rows

    monkeypatch.setattr(graph, "_run", spy)
    seeds = [ID[n] for n in NAMES]
    graph.visible_entities(seeds, ["B"])
    graph.entity_support_in_scope(seeds, ["B"], per_entity=10)
    graph.scoped_relations(seeds, ["B"], depth=3)
    queries = {
        kuzu_cypher.VISIBLE_ENTITIES,
        kuzu_cypher.RECORDS_IN_SCOPE,
        kuzu_cypher.RECORDS_NAMED_OUTSIDE,
        kuzu_cypher.SUPPORT_IN_SCOPE,
        kuzu_cypher.SCOPED_HOP["scoped"],
    }
    assert {query for query, _ in returned} == queries
    in_b = {ID[n] for n in ("Beta", "Shared", "Gamma", "Gamma Ltd")}
    for query, rows in returned:
        if query in (kuzu_cypher.VISIBLE_ENTITIES, kuzu_cypher.RECORDS_IN_SCOPE):
            assert {row[1] for row in rows} <= in_b
        elif query == kuzu_cypher.RECORDS_NAMED_OUTSIDE:  # B's records A names too: only their ids, to drop text
            assert {row[0] for row in rows} <= in_b
        elif query == kuzu_cypher.SUPPORT_IN_SCOPE:
            assert {row[1] for row in rows} <= {B1_0, B1_1}
        else:
            assert {KEY_OF[row[0]] for row in rows} <= {"only_b", "b_hop_2"}


def test_a_chunk_id_of_no_stored_chunk_keeps_a_relation_out_of_every_scope(graph: KuzuGraphStore) -> None:
    """Its document cannot be told from a stored chunk, so only a walk over every document crosses the relation."""
    rel_id = relation_id_for(ID["Beta"], ID["Shared"], "CITES")
    graph.upsert_relations([Relation(rel_id, ID["Beta"], ID["Shared"], "CITES", (B1_0, "B.v9.0"))])
    assert rel_id not in {r.id for r, _, _ in graph.scoped_relations([ID["Beta"]], ["A", "B"])}
    unscoped = {r.id: chunks for r, _, chunks in graph.scoped_relations([ID["Beta"]], None)}
    assert unscoped[rel_id] == [B1_0]
