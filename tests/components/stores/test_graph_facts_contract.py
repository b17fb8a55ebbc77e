"""Contract of the fact-support role (``GraphFactReader``), run against every graph-store backend."""

import pytest

from agrag.components.data_models.document import Document
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.relation import Relation
from agrag.components.stores.graph_store import GraphFactReader, GraphStore
from tests.components.stores.graph_contract import ID, Corpus, as_role, chunks_of


@pytest.fixture
def reader(graph_corpus: tuple[GraphStore, Corpus]) -> GraphFactReader:
    return as_role(graph_corpus, GraphFactReader)


def _asked(corpus: Corpus, *keys: str) -> list[tuple[str, str]]:
    return [(corpus.relations[k].id, corpus.relations[k].source_id) for k in keys]


def test_each_relation_is_stated_by_its_current_chunks(
    reader: GraphFactReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    stated = reader.stated_facts([*_asked(corpus, "wrote", "employs"), ("r-unknown", ID["Maria Chen"])])
    assert {i: f.chunk_ids for i, f in stated.items()} == {
        corpus.relations["wrote"].id: (corpus.chunk("a", 1),),
        corpus.relations["employs"].id: (corpus.chunk("b", 1),),
    }
    wrote = stated[corpus.relations["wrote"].id]
    assert (wrote.source, wrote.type, wrote.target) == ("Maria Chen", "WROTE", "Orion Planner")
    assert wrote.description == "Maria Chen WROTE Orion Planner"
    assert stated == {f.id: f for f in reader.supported_facts() if f.id in stated}, "one fact, read either way"
    # asked from the wrong end, a relation is not found (the lookup starts from its source record)
    assert reader.stated_facts([(corpus.relations["wrote"].id, ID["Orion Planner"])]) == {}
    assert reader.stated_facts([]) == {}


def test_a_chunk_counts_once_committed_and_until_retired(
    reader: GraphFactReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    store, corpus = graph_corpus
    wrote = corpus.relations["wrote"]
    v2 = Document(id="a", version="v2", title="Planner notes", source_path="a.md", source_folder="/notes")
    new = chunks_of(v2, ["Planner notes", "Maria Chen wrote the Orion Planner again."])
    superseded = store.write_chunks([v2], new)
    store.upsert_mentions([Mention(new[1].id, ID["Maria Chen"], 1), Mention(new[1].id, ID["Orion Planner"], 1)])
    store.upsert_relations([Relation(wrote.id, wrote.source_id, wrote.target_id, wrote.type, (new[1].id,))])
    # the new version is written but not committed: only the old chunk states the relation
    assert reader.stated_facts(_asked(corpus, "wrote"))[wrote.id].chunk_ids == (corpus.chunk("a", 1),)
    # read as the commit being written will leave it, the new chunk counts
    as_committed = reader.stated_facts(_asked(corpus, "wrote"), incoming=[new[1].id])
    assert as_committed[wrote.id].chunk_ids == tuple(sorted((corpus.chunk("a", 1), new[1].id)))
    store.retire_chunks(superseded, incoming=[c.id for c in new])
    store.commit_documents([(v2, len(new))], "hash-2")
    after = reader.stated_facts(_asked(corpus, "wrote", "uses"))
    assert {i: f.chunk_ids for i, f in after.items()} == {wrote.id: (new[1].id,)}, "uses lost its chunk"


def test_supported_facts_name_their_ends_and_list_their_current_chunks(
    reader: GraphFactReader, graph_corpus: tuple[GraphStore, Corpus]
) -> None:
    _, corpus = graph_corpus
    facts = {f.id: f for f in reader.supported_facts()}
    assert set(facts) == {r.id for r in corpus.relations.values()}
    builds = facts[corpus.relations["builds"].id]
    assert (builds.source, builds.type, builds.target) == ("Acme Robotics", "BUILDS", "Vega Perception")
    assert builds.chunk_ids == (corpus.chunk("b", 2),)
    assert builds.description == "Acme Robotics BUILDS Vega Perception"
    assert reader.supported_relation_count() == len(corpus.relations)
