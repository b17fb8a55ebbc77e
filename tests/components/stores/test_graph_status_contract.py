"""Contract of the status and maintenance role (``GraphStatusReader``), run against every graph-store backend."""

import pytest

from agrag.components.errors import StoreError
from agrag.components.stores.graph_store import GraphStatusReader, GraphStore
from tests.components.stores.graph_contract import ID, Corpus, as_role


@pytest.fixture
def status(graph_corpus: tuple[GraphStore, Corpus]) -> GraphStatusReader:
    return as_role(graph_corpus, GraphStatusReader)


def test_info_records_facts_and_a_generation_per_commit(status: GraphStatusReader) -> None:
    assert set(status.info()) == {"generation"}
    status.set_info({"embedding_model": "mini"})
    assert status.info()["embedding_model"] == "mini"


def test_counts_of_every_table(status: GraphStatusReader) -> None:
    counts = status.counts()
    assert (counts["Document"], counts["Chunk"], counts["Entity"], counts["RELATED"]) == (2, 6, 5, 4)
    assert (counts["MENTIONS"], counts["ABOUT"], counts["MergeLog"]) == (8, 1, 0)


def test_graph_counts_overall_and_within_a_scope(status: GraphStatusReader) -> None:
    overall = status.graph_counts()
    assert (overall.documents, overall.chunks, overall.communities) == (2, 6, 0)
    assert overall.entity_labels == {"Product": 2, "Concept": 1, "Org": 1, "Person": 1}
    scoped = status.graph_counts(["a"])
    assert (scoped.documents, scoped.chunks, scoped.communities) == (1, 3, None)
    assert scoped.relation_types == {"USES": 1, "WROTE": 1}


def test_what_the_vector_collections_must_hold(
    status: GraphStatusReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    searchable = sorted(c.id for doc in ("a", "b") for c in corpus.chunks[doc][1:])  # section chunks are not embedded
    assert status.embedded_counts() == {"chunks": 4, "entities": 5, "communities": 0}
    sample = status.embedded_sample(limit=2)
    assert len(sample["chunks"]) == 2 and set(sample["chunks"]) <= set(searchable) and sample["communities"] == []
    assert status.searchable_chunk_ids() == searchable
    assert [(e.name, merged) for e, merged in status.all_entities()] == sorted(
        ((name, False) for name in ID), key=lambda pair: ID[pair[0]]
    )


def test_a_closed_store_refuses_reads(status: GraphStatusReader) -> None:
    status.close()
    with pytest.raises(StoreError, match="closed"):
        status.counts()
    status.close()  # closing again does nothing
