"""Lookups by id give the same rows one statement an id as in one ``UNWIND`` statement, and choose by table size."""

from pathlib import Path

import pytest

from agrag.components.data_models.entity import Entity
from agrag.components.stores.kuzu.id_lookups import one_id_form
from agrag.components.stores.kuzu.retrieval_cypher import CANONICAL_IDS, GET_CHUNKS, GET_ENTITIES
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore


def test_the_one_id_form_starts_from_the_primary_key() -> None:
    assert one_id_form("UNWIND $ids AS i MATCH (e:Entity) WHERE e.id = i RETURN e.id") == (
        "MATCH (e:Entity) WHERE e.id = $i RETURN e.id"
    )
    for statement in (GET_CHUNKS, GET_ENTITIES, CANONICAL_IDS):
        assert "$ids" not in one_id_form(statement) and ".id = $i " in one_id_form(statement)
    with pytest.raises(ValueError, match="Not a lookup"):
        one_id_form("MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id")


def test_both_forms_return_the_same_entities_and_the_choice_follows_the_table(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")
    try:
        graph.upsert_entities([Entity(f"e{n}", f"Entity {n}", "Thing") for n in range(30)])
        asked = ["e3", "e7", "e3", "missing", "e29"]
        statements: list[str] = []
        run = graph._run
        graph._run = lambda query, params=None: statements.append(query) or run(query, params)  # type: ignore[method-assign]
        one_statement = graph.get_entities(asked)
        assert [e.id for e in one_statement] == ["e3", "e7", "e3", "e29"]
        assert [q for q in statements if "UNWIND" in q], "30 rows for 4 ids: one statement is cheaper"
        statements.clear()
        graph.per_id_rows = 5  # 4 ids x 5 < 30 rows: each id by its primary key
        assert graph.get_entities(asked) == one_statement
        assert not [q for q in statements if "UNWIND" in q] and len([q for q in statements if "$i" in q]) == 4
        assert graph.get_entities([]) == []
    finally:
        graph.close()
