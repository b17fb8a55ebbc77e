"""Contract of the scoped evidence-reads role (``GraphEvidenceReader``), run against every graph-store backend."""

import pytest

from agrag.components.errors import RetrievalError
from agrag.components.stores.graph_store import GraphEvidenceReader, GraphStore
from tests.components.stores.graph_contract import ID, Corpus, as_role

MARIA, ORION, ACME = ID["Maria Chen"], ID["Orion Planner"], ID["Acme Robotics"]


@pytest.fixture
def evidence(graph_corpus: tuple[GraphStore, Corpus]) -> GraphEvidenceReader:
    return as_role(graph_corpus, GraphEvidenceReader)


def test_chunks_out_of_scope_are_missing_like_unknown_ones(
    evidence: GraphEvidenceReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    asked = [corpus.chunk("b", 1), corpus.chunk("a", 1), "a.v9.0"]
    assert [c.id for c in evidence.get_chunks_in_scope(asked, ["a"])] == [corpus.chunk("a", 1)]
    assert [c.id for c in evidence.get_chunks_in_scope(asked, None)] == asked[:2]
    with pytest.raises(TypeError, match="sequence of document ids"):
        evidence.get_chunks_in_scope(asked, "a")


def test_neighbours_in_each_direction_within_the_scope(
    evidence: GraphEvidenceReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    section, first, second = (c.id for c in corpus.chunks["a"])

    def ids(chunk_id: str, direction: str, scope: list[str] | None = None) -> list[str]:
        return [c.id for c in evidence.chunk_neighbours(chunk_id, direction, scope)]

    assert ids(first, "parent") == [section]
    assert ids(section, "children") == [first, second]
    assert ids(first, "siblings") == [second]
    assert (ids(first, "next"), ids(second, "previous")) == ([second], [first])
    assert ids(first, "next", ["b"]) == []
    with pytest.raises(RetrievalError, match="Unknown chunk direction"):
        evidence.chunk_neighbours(first, "up", None)


def test_spans_and_document_info_within_the_scope(
    evidence: GraphEvidenceReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    second = corpus.chunks["a"][2]
    overlapping = evidence.version_chunks_overlapping("a", "v1", second.start, second.start + 1, None)
    assert [c.id for c in overlapping] == [second.id]
    assert evidence.version_chunks_overlapping("a", "v1", 0, second.end, ["b"]) == []
    assert evidence.document_version_info(["a", "b", "x"], ["a"]) == {"a": ("v1", "Planner notes")}


def test_entities_are_visible_only_where_in_scope_text_names_them(evidence: GraphEvidenceReader) -> None:
    assert [e.name for e in evidence.visible_entities([ACME, MARIA, ORION], ["b"])] == ["Acme Robotics", "Maria Chen"]
    assert [e.id for e in evidence.entities_named_in_scope("Orion Planner", ["b"])] == []
    assert [e.id for e in evidence.entities_named_in_scope("orion planner", ["a"])] == [ORION]


def test_support_within_the_scope_best_first(
    evidence: GraphEvidenceReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    assert evidence.entity_support_in_scope([MARIA], ["b"]) == {MARIA: [corpus.chunk("b", 1)]}
    assert evidence.entity_support_in_scope([ORION], None, per_entity=1) == {ORION: [corpus.chunk("a", 2)]}
    assert evidence.entity_support_in_scope([ORION], ["b"]) == {}


def test_scoped_relations_cross_only_what_in_scope_text_asserts(
    evidence: GraphEvidenceReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    walked = evidence.scoped_relations([MARIA], ["a"], depth=2)
    assert [(r.type, hop, chunks) for r, hop, chunks in walked] == [
        ("WROTE", 1, [corpus.chunk("a", 1)]),
        ("USES", 2, [corpus.chunk("a", 2)]),
    ]
    assert {r.type for r, _, _ in evidence.scoped_relations([MARIA], None, depth=1)} == {"WROTE", "EMPLOYS"}
    assert evidence.scoped_relations([ORION], ["b"]) == []  # not visible in b: starts nothing
