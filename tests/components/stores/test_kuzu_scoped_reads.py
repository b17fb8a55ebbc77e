"""Reads of chunks and documents within a document scope, applied in Kùzu's query, on a real database file."""

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agrag.components.data_models.chunk import SECTION_CHUNK, Chunk, chunk_id_for
from agrag.components.data_models.document import Document
from agrag.components.errors import RetrievalError
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

GUIDE_V1 = Document("d1", "v1", "Guide", "guide.md")
GUIDE_V2 = Document("d1", "v2", "Guide", "guide.md")
OTHER = Document("d2", "v1", "Other", "other.md")
# Three paragraphs of 20 characters each, back to back: children span [0, 20), [20, 40), [40, 60).
PARAGRAPH = 20


def version_chunks(doc: Document, words: Sequence[str]) -> list[Chunk]:
    """One section chunk (order 0) over the whole text, then its three text children (orders 1 to 3)."""
    paragraphs = [f"{w} ".ljust(PARAGRAPH, ".") for w in words]
    text = "".join(paragraphs)
    section = Chunk(
        chunk_id_for(doc.id, doc.version, 0),
        doc.id,
        doc.version,
        text,
        (doc.title,),
        0,
        0,
        len(text),
        None,
        doc.title,
        SECTION_CHUNK,
    )
    children = [
        Chunk(
            chunk_id_for(doc.id, doc.version, i + 1),
            doc.id,
            doc.version,
            paragraph,
            (doc.title,),
            i + 1,
            i * PARAGRAPH,
            (i + 1) * PARAGRAPH,
            section.id,
            doc.title,
        )
        for i, paragraph in enumerate(paragraphs)
    ]
    return [section, *children]


def write_version(graph: KuzuGraphStore, doc: Document, words: Sequence[str]) -> list[Chunk]:
    chunks = version_chunks(doc, words)
    graph.write_chunks([doc], chunks)
    graph.commit_documents([(doc, len(chunks))])
    return chunks


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    yield store
    store.close()


@pytest.fixture
def versions(graph: KuzuGraphStore) -> dict[str, list[Chunk]]:
    """d1 in two versions (v1 superseded) and d2 in one: each a section chunk and three children."""
    old = write_version(graph, GUIDE_V1, ["alpha", "beta", "gamma"])
    new = write_version(graph, GUIDE_V2, ["alpha", "bravo", "charlie"])
    other = write_version(graph, OTHER, ["one", "two", "three"])
    return {"d1.v1": [replace(c, current=False) for c in old], "d1.v2": new, "d2.v1": other}


def ids(chunks: Sequence[Chunk]) -> list[str]:
    return [c.id for c in chunks]


def test_the_adapter_still_satisfies_the_graph_store_interface(graph: KuzuGraphStore) -> None:
    assert isinstance(graph, GraphStore)


def test_chunks_in_scope_come_in_the_order_asked_superseded_ones_included(
    graph: KuzuGraphStore, versions: dict[str, list[Chunk]]
) -> None:
    old, new, other = versions["d1.v1"], versions["d1.v2"], versions["d2.v1"]
    asked = [other[2].id, "d1.v9.0", new[1].id, old[1].id]
    assert graph.get_chunks_in_scope(asked, None) == [other[2], new[1], old[1]]
    assert graph.get_chunks_in_scope(asked, ["d1", "d7"]) == [new[1], old[1]], "old chunks stay readable"
    assert graph.get_chunks_in_scope(asked, ["d2"]) == [other[2]]
    assert graph.get_chunks_in_scope(asked, []) == [], "an empty scope reads nothing"
    assert graph.get_chunks_in_scope([], None) == []


def test_parent_and_children(graph: KuzuGraphStore, versions: dict[str, list[Chunk]]) -> None:
    section, first, second, third = versions["d1.v2"]
    assert graph.chunk_neighbours(second.id, "parent", None) == [section]
    assert graph.chunk_neighbours(section.id, "parent", None) == []
    assert graph.chunk_neighbours(section.id, "children", None) == [first, second, third]
    assert graph.chunk_neighbours(third.id, "children", None) == []


def test_siblings_are_the_parents_other_children_in_order(
    graph: KuzuGraphStore, versions: dict[str, list[Chunk]]
) -> None:
    section, first, second, third = versions["d1.v2"]
    assert graph.chunk_neighbours(second.id, "siblings", None) == [first, third]
    assert graph.chunk_neighbours(first.id, "siblings", None) == [second, third]
    assert graph.chunk_neighbours(third.id, "siblings", None) == [first, second]
    assert graph.chunk_neighbours(section.id, "siblings", None) == [], "a chunk without a parent has no siblings"


def test_previous_and_next_follow_reading_order(graph: KuzuGraphStore, versions: dict[str, list[Chunk]]) -> None:
    section, first, second, third = versions["d1.v2"]
    assert graph.chunk_neighbours(second.id, "previous", None) == [first]
    assert graph.chunk_neighbours(second.id, "next", None) == [third]
    assert graph.chunk_neighbours(first.id, "previous", None) == [section]
    assert graph.chunk_neighbours(section.id, "previous", None) == []
    assert graph.chunk_neighbours(third.id, "next", None) == []


def test_neighbours_of_a_superseded_chunk_stay_in_its_version(
    graph: KuzuGraphStore, versions: dict[str, list[Chunk]]
) -> None:
    section, first, second, third = versions["d1.v1"]
    assert graph.chunk_neighbours(second.id, "next", ["d1"]) == [third]
    assert graph.chunk_neighbours(second.id, "previous", ["d1"]) == [first]
    assert graph.chunk_neighbours(second.id, "parent", ["d1"]) == [section]
    assert graph.chunk_neighbours(second.id, "siblings", ["d1"]) == [first, third]
    assert all(not c.current for c in graph.chunk_neighbours(section.id, "children", ["d1"]))


@pytest.mark.parametrize("direction", ["parent", "children", "siblings", "previous", "next"])
def test_a_chunk_out_of_scope_has_no_neighbours_like_an_unknown_one(
    graph: KuzuGraphStore, versions: dict[str, list[Chunk]], direction: str
) -> None:
    section, _, second, _ = versions["d1.v2"]
    start = section.id if direction == "children" else second.id
    assert graph.chunk_neighbours(start, direction, None) != []
    assert graph.chunk_neighbours(start, direction, ["d1"]) == graph.chunk_neighbours(start, direction, None)
    assert graph.chunk_neighbours(start, direction, ["d2"]) == []
    assert graph.chunk_neighbours(start, direction, []) == []
    assert graph.chunk_neighbours("d1.v9.2", direction, None) == []


def test_an_unknown_direction_names_the_valid_ones(graph: KuzuGraphStore, versions: dict[str, list[Chunk]]) -> None:
    second = versions["d1.v2"][2]
    with pytest.raises(RetrievalError, match=r"'sideways'.*parent, children, siblings, previous, next"):
        graph.chunk_neighbours(second.id, "sideways", None)


def test_a_lone_document_id_is_not_taken_for_a_scope(graph: KuzuGraphStore, versions: dict[str, list[Chunk]]) -> None:
    with pytest.raises(TypeError, match="sequence of document ids"):
        graph.get_chunks_in_scope([versions["d1.v2"][1].id], "d1")


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (20, 40, ["section", "second"]),  # the first child ends at 20 and the third starts at 40: touching only
        (19, 21, ["section", "first", "second"]),  # by start offset, then order: the section before its first child
        (0, 60, ["section", "first", "second", "third"]),
        (39, 41, ["section", "second", "third"]),
        (60, 80, []),  # touches the end of the section and of the last child
        (-10, 0, []),  # touches their start
        (0, 1, ["section", "first"]),
    ],
)
def test_chunks_overlapping_a_range_of_one_version(
    graph: KuzuGraphStore, versions: dict[str, list[Chunk]], start: int, end: int, expected: list[str]
) -> None:
    named = dict(zip(["section", "first", "second", "third"], versions["d1.v2"], strict=True))
    found = graph.version_chunks_overlapping("d1", "v2", start, end, None)
    assert found == [named[name] for name in expected]


def test_overlaps_keep_to_the_version_and_the_scope(graph: KuzuGraphStore, versions: dict[str, list[Chunk]]) -> None:
    old, new = versions["d1.v1"], versions["d1.v2"]
    assert graph.version_chunks_overlapping("d1", "v1", 20, 40, None) == [old[0], old[2]], "superseded chunks too"
    assert graph.version_chunks_overlapping("d1", "v2", 20, 40, ["d1"]) == [new[0], new[2]]
    assert graph.version_chunks_overlapping("d1", "v2", 20, 40, ["d2"]) == []
    assert graph.version_chunks_overlapping("d1", "v2", 20, 40, []) == []
    assert graph.version_chunks_overlapping("d1", "v9", 20, 40, None) == []
    assert graph.version_chunks_overlapping("d9", "v1", 20, 40, None) == []
    assert ids(graph.version_chunks_overlapping("d2", "v1", 0, 60, ["d2"])) == ids(versions["d2.v1"])


def test_document_version_info_gives_the_current_version_and_title(
    graph: KuzuGraphStore, versions: dict[str, list[Chunk]]
) -> None:
    both = {"d1": ("v2", "Guide"), "d2": ("v1", "Other")}
    assert graph.document_version_info(["d1", "d2", "d9"], None) == both
    assert graph.document_version_info(["d1", "d2", "d9"], ["d1", "d2"]) == both
    assert graph.document_version_info(["d1", "d2"], ["d2", "d9"]) == {"d2": ("v1", "Other")}
    assert graph.document_version_info(["d1", "d2"], []) == {}
    assert graph.document_version_info([], None) == {}
    graph.delete_document("d2")
    assert graph.document_version_info(["d2"], None) == {"d2": ("", "Other")}, "a deleted document has no version"


def test_the_scope_is_applied_in_the_query(
    graph: KuzuGraphStore, versions: dict[str, list[Chunk]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kùzu itself returns no row out of scope: nothing is read only to be filtered out afterwards."""
    returned: list[list[list[Any]]] = []
    run = graph._run

    def spy(query: str, params: Any = None) -> list[list[Any]]:
        assert params is not None and {"any_doc", "docs"} <= params.keys()
        rows = run(query, params)
        returned.append(rows)
        return rows

    monkeypatch.setattr(graph, "_run", spy)
    new = versions["d1.v2"]
    assert graph.get_chunks_in_scope(ids(new), ["d2"]) == []
    for direction in ("parent", "children", "siblings", "previous", "next"):
        assert graph.chunk_neighbours(new[1].id, direction, ["d2"]) == []
    assert graph.version_chunks_overlapping("d1", "v2", 0, 60, ["d2"]) == []
    assert graph.document_version_info(["d1"], ["d2"]) == {}
    assert len(returned) == 8
    assert all(rows == [] for rows in returned)
