"""Contract of the retrieval-reads role (``GraphRetrievalReader``), run against every graph-store backend."""

import pytest

from agrag.components.data_models.resolution import MERGED, MergeDecision
from agrag.components.data_models.traversal_direction import TraversalDirection
from agrag.components.errors import RetrievalError
from agrag.components.stores.graph_store import GraphRetrievalReader, GraphStore
from tests.components.stores.graph_contract import ID, Corpus, as_role

MARIA, ORION, SLAM, ACME, VEGA = (
    ID[n] for n in ("Maria Chen", "Orion Planner", "SLAM", "Acme Robotics", "Vega Perception")
)


@pytest.fixture
def reader(graph_corpus: tuple[GraphStore, Corpus]) -> GraphRetrievalReader:
    return as_role(graph_corpus, GraphRetrievalReader)


def test_chunks_and_entities_by_id_in_the_order_asked(
    reader: GraphRetrievalReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    asked = [corpus.chunk("b", 2), "x.v1.0", corpus.chunk("a", 0)]
    assert reader.get_chunks(asked) == [corpus.chunks["b"][2], corpus.chunks["a"][0]]
    assert [e.name for e in reader.get_entities([SLAM, "e-none", MARIA])] == ["SLAM", "Maria Chen"]


def test_support_puts_chunks_about_an_entity_first_then_most_mentions(
    reader: GraphRetrievalReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    support = reader.supporting_chunk_ids([ORION, MARIA])
    assert support == {
        ORION: [corpus.chunk("a", 2), corpus.chunk("a", 1)],
        MARIA: [corpus.chunk("a", 1), corpus.chunk("b", 1)],
    }
    # A limit keeps each entity's first chunks, in the same order.
    assert reader.supporting_chunk_ids([ORION, MARIA], limit=1) == {k: v[:1] for k, v in support.items()}
    assert reader.supporting_chunk_ids([ORION, MARIA], limit=5) == support


def test_passage_edges_and_relations_resolve_merged_entities(
    reader: GraphRetrievalReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    store, corpus = graph_corpus
    store.apply_resolution([MergeDecision(VEGA, ORION, MERGED, "fuzzy", 90.0, "alike")], [], "r1")
    edges = reader.passage_edges()
    assert (corpus.chunk("b", 2), ORION) in edges.mentions and (corpus.chunk("a", 2), ORION) in edges.about
    assert ("vega perception", ORION) in edges.names
    assert {(r.source_id, r.type, r.target_id) for r in reader.relations_of(ORION)} == {
        (MARIA, "WROTE", ORION),
        (ORION, "USES", SLAM),
        (ACME, "BUILDS", ORION),
    }


def _pairs(chunks: list[str], entities: list[str], at_chunks: object, at_entities: object) -> set[tuple[str, str]]:
    return {(chunks[int(c)], entities[int(e)]) for c, e in zip(at_chunks, at_entities, strict=True)}  # type: ignore[call-overload]


def test_passage_columns_hold_the_passage_edges_numbered(
    reader: GraphRetrievalReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    store, corpus = graph_corpus
    store.apply_resolution([MergeDecision(VEGA, ORION, MERGED, "fuzzy", 90.0, "alike")], [], "r1")
    store.retire_chunks([corpus.chunk("b", 0)])  # a superseded chunk links nothing
    edges, columns = reader.passage_edges(), reader.passage_columns()
    mentions = _pairs(columns.chunk_ids, columns.entity_ids, columns.mention_chunks, columns.mention_entities)
    about = _pairs(columns.chunk_ids, columns.entity_ids, columns.about_chunks, columns.about_entities)
    assert (mentions, about) == (set(edges.mentions), set(edges.about))
    assert columns.chunk_ids == sorted({c for c, _ in (*edges.mentions, *edges.about)})
    assert columns.entity_ids == sorted({e for _, e in (*edges.mentions, *edges.about)})
    assert columns.names == edges.names
    weights = columns.weights()
    about_pairs = set(edges.about)
    for chunk_id, entity_id in {*edges.mentions, *edges.about}:
        weight = weights[columns.chunk_ids.index(chunk_id), columns.entity_ids.index(entity_id)]
        assert weight == (3.0 if (chunk_id, entity_id) in about_pairs else 1.0), (chunk_id, entity_id)
    assert weights.nnz == len({*edges.mentions, *edges.about})


def test_entities_of_documents_as_resolved_ids_and_as_records(reader: GraphRetrievalReader) -> None:
    assert reader.entity_ids_of_documents(["b"]) == {ACME, MARIA, VEGA}
    assert reader.entity_records_of_documents(["a"]) == sorted(
        [(MARIA, MARIA, "maria chen"), (ORION, ORION, "orion planner"), (SLAM, SLAM, "slam")]
    )


def test_traverse_walks_hop_by_hop_in_the_direction_asked(reader: GraphRetrievalReader) -> None:
    both = reader.traverse([MARIA], depth=2)
    assert {(r.type, hop) for r, hop in both} == {("WROTE", 1), ("EMPLOYS", 1), ("USES", 2), ("BUILDS", 2)}
    assert [(r.type, hop) for r, hop in reader.traverse([MARIA], direction=TraversalDirection.OUT, depth=2)] == [
        ("WROTE", 1),
        ("USES", 2),
    ]
    assert [r.type for r, _ in reader.traverse([MARIA], ["EMPLOYS"], depth=3)] == ["EMPLOYS"]
    assert len(reader.traverse([MARIA], depth=2, limit=3)) == 3
    with pytest.raises(RetrievalError, match="direction"):
        reader.traverse([MARIA], direction="sideways")


def test_relation_types_and_name_lookups(reader: GraphRetrievalReader) -> None:
    assert reader.relation_types_of(ACME) == {"BUILDS": 1, "EMPLOYS": 1}
    assert reader.relation_types_of("e-none") == {}
    assert [e.id for e in reader.find_entities_by_name("  maria CHEN ")] == [MARIA]
    assert reader.find_entities_by_name("Nobody") == []
