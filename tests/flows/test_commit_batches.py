"""Commit batches: how the write is cut, and that the cut never changes what is stored."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import MERGED, MergeDecision, Resolution, ResolutionCandidate
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_store import CURRENT, MERGED_STATUS, STATUS_FIELD, VectorPoint
from agrag.flows.commit_batches import document_slices, plan_commit_batches
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.support import synthetic_corpus
from tests.support.store_dump import dump, fact_vectors, facts_of_graph


def _document(name: str, chunk_count: int) -> tuple[LoadedDocument, list[Chunk]]:
    doc = Document(id=name, version="v1", title=name, source_path=f"{name}.md")
    chunks = [
        Chunk(chunk_id_for(name, "v1", i), name, "v1", f"text {i}", (name,), i, i, i + 1) for i in range(chunk_count)
    ]
    return LoadedDocument(doc, "text"), chunks


def _point(item_id: str, **payload: str) -> VectorPoint:
    return VectorPoint(item_id, [1.0, 0.0], item_id, {STATUS_FIELD: CURRENT, **payload})


def test_batches_hold_whole_documents_of_about_the_asked_size() -> None:
    loaded = [_document(f"d{i}", n) for i, n in enumerate([3, 1, 4, 1, 5, 0, 2])]
    documents = [d for d, _ in loaded]
    chunks = [c for _, cs in loaded for c in cs]
    assert document_slices(documents, chunks, 4) == [[0, 1], [2], [3, 4], [5, 6]]
    assert document_slices(documents, chunks, 1000) == [[0, 1, 2, 3, 4, 5, 6]]
    assert document_slices(documents, chunks, 1) == [[0], [1], [2], [3], [4], [5, 6]]


def test_each_batch_writes_what_concerns_its_documents_once_its_entities_exist() -> None:
    """Three one-document batches; entities, links, relation support, decisions and candidates placed by batch."""
    (a, a_chunks), (b, b_chunks), (c, c_chunks) = (_document(n, 2) for n in ("da", "db", "dc"))
    ada, bob, acme, acme_inc, zed = (Entity(i, i.title(), "Thing") for i in ("ada", "bob", "acme", "acme_inc", "zed"))
    mentions = (
        Mention(a_chunks[0].id, "ada", 1),
        Mention(b_chunks[0].id, "bob", 2),
        Mention(c_chunks[1].id, "ada", 1),
        Mention(c_chunks[0].id, "acme_inc", 1),
        Mention(a_chunks[1].id, "acme", 1),
        Mention(b_chunks[1].id, "zed", 1),
    )
    works = Relation("r1", "ada", "bob", "WORKS_WITH", (a_chunks[0].id, c_chunks[1].id, b_chunks[0].id))
    stray = Relation("r2", "bob", "zed", "KNOWS", ("elsewhere.v1.0",))
    merge = MergeDecision("acme_inc", "acme", MERGED, "fuzzy", 96.0, "spelled alike")
    near = ResolutionCandidate("acme_inc", "bob", "Acme Inc", "Bob", 86.0, "fuzzy")
    resolution = Resolution(
        Extraction(
            (ada, bob, acme, acme_inc, zed), mentions, (works, stray), about=(Mention(b_chunks[1].id, "bob", 1),)
        ),
        decisions=(MergeDecision("bob", "zed", "kept_apart", "homonym", 1.0, "two Bobs"), merge),
        candidates=(near,),
    )
    chunk_points = [_point(ch.id, document_id=ch.document_id) for ch in (*a_chunks, *b_chunks, *c_chunks)]
    entity_points = [VectorPoint("acme_inc", [1.0], "", {STATUS_FIELD: MERGED_STATUS})]
    batches = plan_commit_batches(
        [a, b, c],
        [*a_chunks, *b_chunks, *c_chunks],
        resolution,
        chunk_points=chunk_points,
        entity_points=entity_points,
        size=2,
    )
    assert [[d.document.id for d in batch.documents] for batch in batches] == [["da"], ["db"], ["dc"]]
    assert [len(batch.chunks) for batch in batches] == [2, 2, 2]
    assert [len(batch.chunk_points) for batch in batches] == [2, 2, 2]
    assert [sorted(e.id for e in batch.entities) for batch in batches] == [
        ["acme", "ada", "bob"],
        ["zed"],
        ["acme_inc"],
    ]
    # the relation is written by each batch with that batch's support; added up, it is the whole support
    assert [[(r.id, r.chunk_ids) for r in batch.relations if r.id == "r1"] for batch in batches] == [
        [("r1", (a_chunks[0].id,))],
        [("r1", (b_chunks[0].id,))],
        [("r1", (c_chunks[1].id,))],
    ]
    assert [r.id for r in batches[1].relations if r.id == "r2"] == ["r2"], "unsupported here: once both ends exist"
    # decisions wait for both of their entities, and keep their place in the run's list
    assert [(batch.decisions, batch.positions) for batch in batches] == [
        ((), ()),
        ((resolution.decisions[0],), (0,)),
        ((merge,), (1,)),
    ]
    assert batches[2].merged == {"acme_inc": "acme"} and batches[2].candidates == (near,)
    # the member's vector is written in the batch that also applies its merge, already marked merged
    assert [p.payload[STATUS_FIELD] for p in batches[2].entity_points] == [MERGED_STATUS]
    # ada is named again by dc: retiring older chunks in an earlier batch must not delete her
    assert "ada" in batches[0].keep and "ada" in batches[1].keep and "ada" not in batches[2].keep
    assert "bob" not in batches[1].keep


def test_a_member_stays_searchable_until_its_merge_is_written() -> None:
    (a, a_chunks), (b, b_chunks) = _document("da", 1), _document("db", 1)
    member, target = Entity("m", "Acme Inc", "Org"), Entity("t", "Acme", "Org")
    resolution = Resolution(
        Extraction((member, target), (Mention(a_chunks[0].id, "m", 1), Mention(b_chunks[0].id, "t", 1)), ()),
        decisions=(MergeDecision("m", "t", MERGED, "fuzzy", 95.0, "alike"),),
    )
    entity_points = [VectorPoint("m", [1.0], "", {STATUS_FIELD: MERGED_STATUS}), _point("t")]
    first, second = plan_commit_batches(
        [a, b], [*a_chunks, *b_chunks], resolution, chunk_points=[], entity_points=entity_points, size=1
    )
    assert [(p.id, p.payload[STATUS_FIELD]) for p in first.entity_points] == [("m", CURRENT)]
    assert second.merged == {"m": "t"}, "the batch that writes the target applies the merge (and marks the member)"


@pytest.fixture
def stores(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[list[KnowledgeStore]]:
    config = load_config()
    opened = [
        open_knowledge_store(AgragSettings(data_dir=tmp_path / name), config.vector_store, embedder)
        for name in ("whole", "sliced")
    ]
    yield opened
    for store in opened:
        store.close()


def test_the_batch_size_does_not_change_what_is_stored(
    prefect_harness: None, tmp_path: Path, stores: list[KnowledgeStore], embedder: SentenceTransformersTextEmbedder
) -> None:
    """The same notes, written in one batch or in batches of a few chunks, then changed and written again."""
    folder = tmp_path / "notes"
    synthetic_corpus.write_corpus(folder, 40)
    whole, sliced = stores
    configs = {id(whole): load_config(), id(sliced): load_config(["ingest.write_batch_chunks=3"])}
    for store in stores:
        ingest_into(str(folder), configs[id(store)], store, embedder)
    assert dump(sliced) == dump(whole)
    assert fact_vectors(whole) == facts_of_graph(whole) != []

    # new versions move names between notes: what an older version alone named is named by a later batch now
    for index in (3, 17, 29):
        note = folder / f"note_{index:03d}.md"
        other = (folder / f"note_{index + 5:03d}.md").read_text(encoding="utf-8")
        note.write_text(other.replace("# ", "# Copy of ", 1), encoding="utf-8")
    (folder / "note_031.md").unlink()
    shutil.copy(folder / "note_000.md", folder / "note_040.md")
    reports = [ingest_into(str(folder), configs[id(store)], store, embedder) for store in stores]
    assert reports[0].documents_ingested == reports[1].documents_ingested == 4
    assert dump(sliced) == dump(whole)
    # every fact point mirrors a relation some current passage states, with exactly those passages
    assert fact_vectors(whole) == facts_of_graph(whole)


def test_an_entity_that_moves_to_a_later_batch_keeps_its_vector(
    prefect_harness: None, tmp_path: Path, stores: list[KnowledgeStore], embedder: SentenceTransformersTextEmbedder
) -> None:
    """Only a's old version named Quillon Vantage; its new version does not, and b's (a later batch) does now."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nQuillon Vantage runs the Alpha line.\n", encoding="utf-8")
    (folder / "b.md").write_text("# Beta\n\nThe Beta line has no owner.\n", encoding="utf-8")
    whole, sliced = stores
    configs = {id(whole): load_config(), id(sliced): load_config(["ingest.write_batch_chunks=1"])}
    for store in stores:
        ingest_into(str(folder), configs[id(store)], store, embedder)
    (folder / "a.md").write_text("# Alpha\n\nThe Alpha line has no owner.\n", encoding="utf-8")
    (folder / "b.md").write_text("# Beta\n\nQuillon Vantage runs the Beta line.\n", encoding="utf-8")
    for store in stores:
        ingest_into(str(folder), configs[id(store)], store, embedder)
    assert dump(sliced) == dump(whole)
    for store in stores:
        (quillon,) = store.graph.find_entities_by_name("Quillon Vantage")
        assert store.entities.existing_ids([quillon.id]) == {quillon.id}, "searchable by its vector"
