"""Closed sets read back from the stores: each comes back as its enum, and a value outside the set is a typed error."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agrag.components.choice_errors import UnknownStoredValueError
from agrag.components.data_models.chunk import Chunk, ChunkKind
from agrag.components.data_models.community import Community, CommunityReport, ReportMethod
from agrag.components.data_models.document import Document
from agrag.components.errors import StoreError
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.vector_payloads import (
    chunk_from_payload,
    chunk_payload,
    community_from_payload,
    community_payload,
)
from agrag.components.stores.vector_store import VectorHit

DOC = Document("d1", "v1", "Doc", "doc.md")


def chunk(order: int, kind: Any) -> Chunk:
    """A chunk of ``DOC``; ``kind`` may be a value this agrag does not know (as another version could store)."""
    return Chunk(f"d1.v1.{order}", "d1", "v1", f"text {order}", ("Doc",), order, order * 10, order * 10 + 6, kind=kind)


def community(method: Any) -> Community:
    return Community("c1", 0, ("e1",), report=CommunityReport("Title", "Summary.", 5.0, method=method))


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    yield store
    store.close()


def test_the_graph_store_reads_chunk_kinds_and_report_methods_as_enums(graph: KuzuGraphStore) -> None:
    graph.write_chunks([DOC], [chunk(0, ChunkKind.SECTION), chunk(1, ChunkKind.TEXT), chunk(2, ChunkKind.TABLE)])
    graph.commit_documents([(DOC, 3)])
    graph.replace_communities([community(ReportMethod.LLM)])
    read = graph.get_chunks(["d1.v1.0", "d1.v1.1", "d1.v1.2"])
    assert [(c.kind, type(c.kind)) for c in read] == [
        (ChunkKind.SECTION, ChunkKind),
        (ChunkKind.TEXT, ChunkKind),
        (ChunkKind.TABLE, ChunkKind),
    ]
    report = graph.communities()[0].report
    assert report is not None
    assert (report.method, type(report.method)) == (ReportMethod.LLM, ReportMethod)


def test_an_unknown_stored_chunk_kind_is_a_store_error_that_lists_the_known_ones(graph: KuzuGraphStore) -> None:
    graph.write_chunks([DOC], [chunk(0, "figure")])
    graph.commit_documents([(DOC, 1)])
    with pytest.raises(UnknownStoredValueError, match=r"graph store holds an unknown chunk kind 'figure'") as caught:
        graph.get_chunks(["d1.v1.0"])
    assert isinstance(caught.value, StoreError)
    assert caught.value.valid == ["text", "section", "table"]


def test_an_unknown_stored_report_method_is_a_store_error(graph: KuzuGraphStore) -> None:
    graph.replace_communities([community("abstractive")])
    with pytest.raises(UnknownStoredValueError, match=r"community report method 'abstractive'.*llm, extractive"):
        graph.communities()


def test_vector_payloads_read_back_enums_and_refuse_unknown_values() -> None:
    hit = VectorHit("d1.v1.2", 1.0, chunk_payload(chunk(2, ChunkKind.TABLE)))
    assert type(chunk_from_payload(hit).kind) is ChunkKind
    report = community_from_payload(VectorHit("c1", 1.0, community_payload(community(ReportMethod.LLM)))).report
    assert report is not None
    assert type(report.method) is ReportMethod
    with pytest.raises(UnknownStoredValueError, match=r"vector store holds an unknown chunk kind 'figure'"):
        chunk_from_payload(VectorHit("d1.v1.0", 1.0, {**hit.payload, "kind": "figure"}))
    with pytest.raises(UnknownStoredValueError, match="community report method 'abstractive'"):
        community_from_payload(VectorHit("c1", 1.0, community_payload(community("abstractive"))))
