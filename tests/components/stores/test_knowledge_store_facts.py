"""Fact points on real stores: pending inside a commit, settled from the graph after it, gone with their passages."""

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from agrag.components.data_models.document import Document
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.fact import Fact
from agrag.components.errors import StoreError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.pending_vectors import PendingVectors
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.vector_payloads import fact_payload
from agrag.components.stores.vector_store import CURRENT, PENDING, STATUS_FIELD, VectorCollection, VectorPoint
from tests.components.stores.graph_contract import ID, Corpus, chunks_of, write_corpus
from tests.support.store_dump import fact_vectors, facts_of_graph

DIM = 4
NAMES = {v: k for k, v in ID.items()}


def _open(path: Path) -> KnowledgeStore:
    vectors = {
        c: QdrantEdgeVectorStore(path / c.value, c, DIM, keyword_fields=("status", "chunk_ids", "source_id"))
        for c in VectorCollection
    }
    return KnowledgeStore(
        KuzuGraphStore(path / "graph.kuzu"),
        vectors[VectorCollection.CHUNKS],
        vectors[VectorCollection.ENTITIES],
        vectors[VectorCollection.COMMUNITIES],
        vectors[VectorCollection.FACTS],
    )


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[KnowledgeStore, Corpus]]:
    store = _open(tmp_path)
    corpus = write_corpus(store.graph)
    yield store, corpus
    store.close()


def _points(corpus: Corpus, *keys: str) -> list[VectorPoint]:
    """The points ingestion writes for these relations, with the passages it extracted them from."""
    points = []
    for number, key in enumerate(keys):
        r = corpus.relations[key]
        fact = Fact(
            r.id, r.source_id, NAMES[r.source_id], r.type, r.target_id, NAMES[r.target_id], r.description, r.chunk_ids
        )
        dense = [1.0 if i == number % DIM else 0.1 for i in range(DIM)]
        points.append(VectorPoint(r.id, dense, r.description, fact_payload(fact)))
    return points


def test_points_are_pending_inside_the_commit_and_mirror_the_graph_after_it(
    stores: tuple[KnowledgeStore, Corpus],
) -> None:
    store, corpus = stores
    with store.committing() as pending:
        pending.add(VectorCollection.FACTS, _points(corpus, "wrote", "uses", "employs", "builds"))
        statuses = {p.payload[STATUS_FIELD] for p in store.facts.fetch([r.id for r in corpus.relations.values()])}
        assert statuses == {PENDING}, "no search finds a fact before its commit ends"
    assert fact_vectors(store) == facts_of_graph(store)
    assert {s for _, s, _, _ in fact_vectors(store)} == {CURRENT}


def test_a_retired_passage_takes_its_facts_out_and_trims_the_others(stores: tuple[KnowledgeStore, Corpus]) -> None:
    store, corpus = stores
    with store.committing() as pending:
        pending.add(VectorCollection.FACTS, _points(corpus, "wrote", "uses", "employs", "builds"))
    v2 = Document(id="a", version="v2", title="Planner notes", source_path="a.md", source_folder="/notes")
    new = chunks_of(v2, ["Planner notes", "Maria Chen rebuilt the Orion Planner."])
    with store.committing() as pending:
        superseded = store.graph.write_chunks([v2], new)
        store.graph.upsert_mentions(
            [Mention(new[1].id, ID["Maria Chen"], 1), Mention(new[1].id, ID["Orion Planner"], 1)]
        )
        wrote = corpus.relations["wrote"]
        store.graph.upsert_relations([replace(wrote, chunk_ids=(new[1].id,))])
        store.retire_chunks(superseded, pending=pending, incoming=[c.id for c in new])
        store.graph.commit_documents([(v2, len(new))], "hash-2")
    facts = {i: chunk_ids for i, _, chunk_ids, _ in fact_vectors(store)}
    assert facts[wrote.id] == (new[1].id,), "stated by the new version's passage only"
    assert corpus.relations["uses"].id not in facts, "only the superseded version stated it"
    assert fact_vectors(store) == facts_of_graph(store)


def test_a_commit_that_fails_leaves_no_fact_pending(stores: tuple[KnowledgeStore, Corpus]) -> None:
    store, corpus = stores
    with pytest.raises(StoreError), store.committing() as pending:
        pending.add(VectorCollection.FACTS, _points(corpus, "wrote", "builds"))
        raise StoreError("the graph's commit failed")
    # what the graph holds decides: both relations are committed, so their points are current
    assert [s for _, s, _, _ in fact_vectors(store)] == [CURRENT, CURRENT]


def test_points_a_killed_commit_left_pending_are_settled_when_the_data_dir_opens(
    tmp_path: Path, stores: tuple[KnowledgeStore, Corpus]
) -> None:
    store, corpus = stores
    ghost = _points(corpus, "wrote")[0]
    ghost = VectorPoint("r-never-written", ghost.dense, ghost.text, {**ghost.payload})
    # as a process killed between its vector writes and its graph commit leaves them
    store.facts.upsert([*_points(corpus, "wrote", "employs"), ghost], status=PENDING)
    assert store.settle_pending() == 3
    assert [i for i, _, _, _ in fact_vectors(store)] == sorted([corpus.relations[k].id for k in ("wrote", "employs")])
    assert store.settle_pending() == 0


def test_facts_are_found_by_their_passages_and_their_ends(stores: tuple[KnowledgeStore, Corpus]) -> None:
    store, corpus = stores
    with store.committing() as pending:
        pending.add(VectorCollection.FACTS, _points(corpus, "wrote", "uses", "employs", "builds"))
    ids = {k: r.id for k, r in corpus.relations.items()}
    assert store.facts_of(chunk_ids=[corpus.chunk("a", 1), corpus.chunk("b", 2)]) == sorted(
        [ids["wrote"], ids["builds"]]
    )
    assert store.facts_of(entity_ids=[ID["Maria Chen"]]) == sorted([ids["wrote"], ids["employs"]])
    assert store.facts_of() == []


def _new_version(store: KnowledgeStore, corpus: Corpus) -> tuple[list[str], list[str]]:
    """Write version 2 of document a (its relation wrote restated, uses gone), uncommitted; return old and new ids."""
    v2 = Document(id="a", version="v2", title="Planner notes", source_path="a.md", source_folder="/notes")
    new = chunks_of(v2, ["Planner notes", "Maria Chen rebuilt the Orion Planner."])
    superseded = store.graph.write_chunks([v2], new)
    store.graph.upsert_mentions([Mention(new[1].id, ID["Maria Chen"], 1), Mention(new[1].id, ID["Orion Planner"], 1)])
    store.graph.upsert_relations([replace(corpus.relations["wrote"], chunk_ids=(new[1].id,))])
    return superseded, [c.id for c in new]


def test_write_facts_writes_each_point_once_as_the_commit_will_leave_it(stores: tuple[KnowledgeStore, Corpus]) -> None:
    store, corpus = stores
    with store.committing() as pending:
        pending.add(VectorCollection.FACTS, _points(corpus, "wrote", "uses", "employs", "builds"))
    v2 = Document(id="a", version="v2", title="Planner notes", source_path="a.md", source_folder="/notes")
    with store.committing() as pending:
        superseded, incoming = _new_version(store, corpus)
        store.retire_chunks(superseded, pending=pending, incoming=incoming)
        store.write_facts(pending, _points(corpus, "wrote"), incoming)
        assert pending.facts_from_graph() == [], "every fact of the commit is written as it will be"
        written = {p.id: p.payload for p in store.facts.fetch([r.id for r in corpus.relations.values()])}
        assert written[corpus.relations["wrote"].id]["chunk_ids"] == [incoming[1]]
        assert {p[STATUS_FIELD] for p in written.values() if p["document_ids"] == ["a"]} == {PENDING}
        store.graph.commit_documents([(v2, len(incoming))], "hash-2")
    assert fact_vectors(store) == facts_of_graph(store)
    assert corpus.relations["uses"].id not in {i for i, _, _, _ in fact_vectors(store)}


def test_a_commit_killed_after_write_facts_is_settled_from_what_the_graph_committed(
    stores: tuple[KnowledgeStore, Corpus],
) -> None:
    store, corpus = stores
    with store.committing() as pending:
        pending.add(VectorCollection.FACTS, _points(corpus, "wrote", "uses", "employs", "builds"))
    before = fact_vectors(store)
    # as a process killed before the commit statement leaves it: the points written as if it had committed, pending
    pending = PendingVectors(store.chunks, store.entities, store.facts, store.settle_facts)
    superseded, incoming = _new_version(store, corpus)
    store.retire_chunks(superseded, pending=pending, incoming=incoming)
    store.write_facts(pending, _points(corpus, "wrote"), incoming)
    assert store.settle_pending() > 0
    # the graph's retirement ran (its statements commit one by one) but not the commit: wrote lost its old passage and
    # its new one is not committed, uses lost its only one; the points say what the graph says, and the run started
    # again writes them back
    kept = {i for i, _, _, _ in fact_vectors(store)}
    assert corpus.relations["wrote"].id not in kept and corpus.relations["uses"].id not in kept
    assert corpus.relations["employs"].id in kept
    assert fact_vectors(store) == facts_of_graph(store) and len(before) > len(kept)
