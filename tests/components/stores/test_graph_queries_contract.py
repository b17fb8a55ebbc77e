"""Contract of the user-query role (``GraphQueryRunner``), run against every graph-store backend."""

import pytest

from agrag.components.errors import GraphQueryRefusedError, GraphQueryTooLargeError, StoreError
from agrag.components.stores.graph_store import GraphQueryRunner, GraphStore
from tests.components.stores.graph_contract import Corpus, as_role


@pytest.fixture
def queries(graph_corpus: tuple[GraphStore, Corpus]) -> GraphQueryRunner:
    return as_role(graph_corpus, GraphQueryRunner)


def test_a_read_only_query_returns_its_columns_and_capped_rows(queries: GraphQueryRunner) -> None:
    columns, rows = queries.run_read_only("MATCH (e:Entity) WHERE e.label = $label RETURN e.name", {"label": "Product"})
    assert columns == ["e.name"] and sorted(rows) == [["Orion Planner"], ["Vega Perception"]]
    assert len(queries.run_read_only("MATCH (e:Entity) RETURN e.id", max_rows=2)[1]) == 2


def test_writes_internal_tables_and_oversized_rows_are_refused(queries: GraphQueryRunner) -> None:
    with pytest.raises(GraphQueryRefusedError, match="read-only"):
        queries.run_read_only("MATCH (e:Entity) SET e.name = 'x'")
    with pytest.raises(GraphQueryRefusedError, match="internal table"):
        queries.run_read_only("MATCH (m:MergeLog) RETURN m.id")
    with pytest.raises(GraphQueryTooLargeError):
        queries.run_read_only("MATCH (c:Chunk) RETURN c.text", max_bytes=10)
    with pytest.raises(StoreError, match="no value"):
        queries.run_read_only("MATCH (e:Entity) WHERE e.id = $id RETURN e")


def test_the_schema_text_describes_the_public_tables_only(queries: GraphQueryRunner) -> None:
    text = queries.schema_text()
    assert "Entity(id STRING PRIMARY KEY" in text and "(:Entity)-[:RELATED" in text
    assert "MergeLog" not in text and "StoreInfo" not in text
    assert "RELATED.type values (most common first): " in text
