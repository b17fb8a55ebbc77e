"""Rows for a bulk ``COPY`` built from columns: in the table's order, ends first, checked before Kùzu sees them."""

from __future__ import annotations

import pytest

from agrag.components.data_models.relation import Relation
from agrag.components.errors import StoreError
from agrag.components.stores.kuzu.arrow_rows import arrow_columns, columns_of
from agrag.components.stores.kuzu.bulk_load import _relation_columns

COLUMNS = [("count", "INT64"), ("chunk_ids", "STRING[]")]


def test_columns_are_laid_out_ends_first_in_the_tables_order() -> None:
    data = {"chunk_ids": [["c1"], []], "count": [2, 1], "to": ["e2", "e3"], "from": ["e1", "e1"]}
    table = arrow_columns("RELATED", COLUMNS, data, relation=True)
    assert table.column_names == ["from", "to", "count", "chunk_ids"]
    assert table.to_pylist()[0] == {"from": "e1", "to": "e2", "count": 2, "chunk_ids": ["c1"]}
    rows = [
        {"from": "e1", "to": "e2", "count": 2, "chunk_ids": ["c1"]},
        {"from": "e1", "to": "e3", "count": 1, "chunk_ids": []},
    ]
    assert arrow_columns("RELATED", COLUMNS, columns_of(rows), relation=True).equals(table), "rows give the same table"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"from": ["a"], "to": ["b"], "count": [1]}, "lack the column 'chunk_ids'"),
        ({"from": ["a", "x"], "to": ["b"], "count": [1], "chunk_ids": [[]]}, "differ in length"),
    ],
)
def test_a_missing_or_short_column_is_an_internal_error_named_for_its_table(data: dict, message: str) -> None:
    with pytest.raises(StoreError, match=message) as caught:
        arrow_columns("RELATED", COLUMNS, data, relation=True)
    assert "RELATED" in str(caught.value)


def test_a_row_without_a_column_of_the_first_row_is_an_internal_error() -> None:
    with pytest.raises(StoreError, match="lacks the column 'count'"):
        columns_of([{"from": "a", "count": 1}, {"from": "b"}])


def test_a_relation_entered_twice_is_one_row_supported_by_the_union_of_its_chunks() -> None:
    relations = [
        Relation("x", "e1", "e2", "USES", ("c2", "c1"), "first"),
        Relation("y", "e2", "e3", "OWNS", ("c5", "c5")),
        Relation("x", "e1", "e2", "USES", ("c3", "c1"), "second"),
        Relation("z", "e1", "gone", "OWNS", ("c9",)),  # an end that is not written
    ]
    columns = _relation_columns(relations, {"e1", "e2", "e3"})
    assert columns["id"] == ["x", "y"] and columns["description"] == ["first", ""], "the first entry of each id"
    assert columns["chunk_ids"] == [["c1", "c2", "c3"], ["c5"]]
    assert (columns["from"], columns["to"], columns["type"]) == (["e1", "e2"], ["e2", "e3"], ["USES", "OWNS"])
