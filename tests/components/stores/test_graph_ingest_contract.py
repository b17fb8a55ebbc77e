"""Contract of the ingest-writes role (``GraphIngestWriter``), run against every graph-store backend."""

import pytest

from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.relation import Relation
from agrag.components.stores.graph_store import GraphIngestWriter, GraphStore
from tests.components.stores.graph_contract import ID, Corpus, as_role, chunks_of


@pytest.fixture
def writer(graph_corpus: tuple[GraphStore, Corpus]) -> GraphIngestWriter:
    return as_role(graph_corpus, GraphIngestWriter)


def test_a_new_version_supersedes_the_chunks_of_the_old_one(
    writer: GraphIngestWriter, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    store, corpus = graph_corpus
    v2 = Document(id="a", version="v2", title="Planner notes", source_path="a.md")
    new_chunks = chunks_of(v2, ["Planner notes", "Maria Chen retired."])
    superseded = writer.write_chunks([v2], new_chunks)
    assert sorted(superseded) == sorted(c.id for c in corpus.chunks["a"])
    # until the commit, the new chunks are read by no one and the old ones stay current
    assert [c.current for c in store.get_chunks([corpus.chunk("a", 1), new_chunks[1].id])] == [True]
    assert store.document_versions(["a"]) == {"a": "v1"}
    before = store.info()["generation"]
    writer.commit_documents([(v2, 2)], "hash-2", plans={"a": ""})
    assert [c.current for c in store.get_chunks([corpus.chunk("a", 1), new_chunks[1].id])] == [False, True]
    assert store.document_versions(["a"]) == {"a": "v2"}
    assert store.info()["generation"] != before


def test_entities_are_created_once_and_keep_what_first_named_them(writer: GraphIngestWriter) -> None:
    assert writer.existing_entity_ids([ID["SLAM"], "e-none"]) == {ID["SLAM"]}
    writer.upsert_entities([Entity(ID["SLAM"], "Slam", "Other", "renamed"), Entity("e-new", "New", "Thing")])
    assert writer.existing_entity_ids([ID["SLAM"], "e-new"]) == {ID["SLAM"], "e-new"}
    assert isinstance(writer, GraphStore)
    slam = writer.get_entities([ID["SLAM"]])[0]
    assert (slam.name, slam.label, slam.description) == ("SLAM", "Concept", "SLAM as first named")


def test_a_relation_written_again_gains_supporting_chunks(
    writer: GraphIngestWriter, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    store, corpus = graph_corpus
    wrote = corpus.relations["wrote"]
    writer.upsert_relations([Relation(wrote.id, wrote.source_id, wrote.target_id, "WROTE", (corpus.chunk("a", 2),))])
    stored = {r.id: r for r in store.relations_of(ID["Maria Chen"])}[wrote.id]
    assert stored.chunk_ids == tuple(sorted((corpus.chunk("a", 1), corpus.chunk("a", 2))))


def test_links_of_chunks_are_written_and_read_back(
    writer: GraphIngestWriter, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    store, corpus = graph_corpus
    writer.upsert_mentions([Mention(corpus.chunk("b", 2), ID["SLAM"], 3)])
    writer.upsert_about([Mention(corpus.chunk("b", 1), ID["Acme Robotics"], 1)])
    assert writer.entities_of_chunks([corpus.chunk("b", 2)]) == {ID["Acme Robotics"], ID["Vega Perception"], ID["SLAM"]}
    assert store.supporting_chunk_ids([ID["Acme Robotics"]])[ID["Acme Robotics"]][0] == corpus.chunk("b", 1)


def test_retiring_chunks_takes_out_what_only_they_supported(
    writer: GraphIngestWriter, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    store, corpus = graph_corpus
    store.delete_document("b")
    retired = writer.retire_chunks([c.id for c in corpus.chunks["b"]], keep=[ID["Vega Perception"]])
    assert set(retired.touched) == {ID["Acme Robotics"], ID["Maria Chen"], ID["Vega Perception"]}
    assert retired.removed == (ID["Acme Robotics"],)  # Maria Chen is still named by a; Vega Perception is kept
    assert writer.existing_entity_ids(list(ID.values())) == set(ID.values()) - {ID["Acme Robotics"]}
    assert {r.type for r in store.relations_of(ID["Maria Chen"])} == {"WROTE"}
    again = writer.retire_chunks([c.id for c in corpus.chunks["b"]], keep=[ID["Vega Perception"]])
    assert again.removed == ()
    assert writer.retire_chunks([]).touched == ()


def test_unlinked_chunks_lose_their_links_and_orphans_can_then_be_dropped(
    writer: GraphIngestWriter, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    store, corpus = graph_corpus
    a_text = [corpus.chunk("a", 1), corpus.chunk("a", 2)]
    named = writer.entities_of_chunks(a_text)
    writer.unlink_chunks(a_text)
    assert writer.entities_of_chunks(a_text) == set()
    assert store.relations_of(ID["SLAM"]) == []
    assert len(store.get_chunks(a_text)) == 2  # the chunks themselves stay
    dropped = writer.drop_unnamed_entities(sorted(named))
    assert sorted(dropped) == sorted({ID["Orion Planner"], ID["SLAM"]})  # Maria Chen is still named by b
    assert writer.existing_entity_ids(sorted(named)) == {ID["Maria Chen"]}
    writer.drop_unnamed_entities(sorted(named))  # again: nothing more changes
    assert writer.existing_entity_ids(sorted(named)) == {ID["Maria Chen"]}
