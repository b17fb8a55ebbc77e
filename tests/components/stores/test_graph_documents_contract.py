"""Contract of the documents role (``GraphDocumentStore``), run against every graph-store backend."""

import pytest

from agrag.components.data_models.applied_plan import AppliedPlan
from agrag.components.errors import DocumentNotFoundError
from agrag.components.stores.graph_store import GraphDocumentStore, GraphStore
from tests.components.stores.graph_contract import Corpus, as_role


@pytest.fixture
def documents(graph_corpus: tuple[GraphStore, Corpus]) -> GraphDocumentStore:
    return as_role(graph_corpus, GraphDocumentStore)


def test_versions_of_known_documents_only(documents: GraphDocumentStore) -> None:
    assert documents.document_versions(["a", "b", "nope"]) == {"a": "v1", "b": "v1"}


def test_stored_documents_carry_their_origin_and_folders_can_be_recorded(documents: GraphDocumentStore) -> None:
    stored = documents.stored_documents(["a", "nope"])
    assert list(stored) == ["a"]
    assert (stored["a"].title, stored["a"].source_path, stored["a"].chunks) == ("Planner notes", "a.md", 3)
    assert stored["a"].source_folder == "/notes"
    documents.record_source_folders({"a": "/elsewhere"})
    assert documents.stored_documents(["a"])["a"].source_folder == "/elsewhere"


def test_settings_hashes_and_plans_round_trip(documents: GraphDocumentStore) -> None:
    assert documents.document_config_hashes(["a", "b"]) == {"a": "hash-1", "b": "hash-1"}
    documents.set_config_hashes({"b": "hash-2"})
    assert documents.document_config_hashes(["a", "b"]) == {"a": "hash-1", "b": "hash-2"}
    plan = AppliedPlan(rule=2, match="*.md", chunker="structural", reasons=("markdown",))
    documents.set_document_plans({"a": plan.to_json()})
    listed = {d.id: d.plan for d in documents.documents()}
    assert listed == {"a": plan, "b": None}


def test_chunk_ids_in_document_order_of_every_version_or_one(
    documents: GraphDocumentStore, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    assert documents.document_chunk_ids("a") == [c.id for c in corpus.chunks["a"]]
    assert documents.document_chunk_ids("a", version="v0") == []
    assert documents.document_chunk_ids("nope") == []


def test_listing_by_source_path_within_a_scope_and_a_page(documents: GraphDocumentStore) -> None:
    assert [d.id for d in documents.documents()] == ["a", "b"]
    assert [d.id for d in documents.documents(scope=["b"])] == ["b"]
    assert [d.id for d in documents.documents(offset=1, limit=5)] == ["b"]
    assert documents.documents(scope=[]) == []


def test_a_deleted_document_leaves_the_listing_and_returns_its_chunks(
    documents: GraphDocumentStore, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    assert sorted(documents.delete_document("a")) == sorted(c.id for c in corpus.chunks["a"])
    assert [d.id for d in documents.documents()] == ["b"]
    assert documents.document_versions(["a"]) == {"a": ""}
    assert sorted(documents.delete_document("a")) == sorted(c.id for c in corpus.chunks["a"])  # again: the same
    with pytest.raises(DocumentNotFoundError):
        documents.delete_document("nope")
