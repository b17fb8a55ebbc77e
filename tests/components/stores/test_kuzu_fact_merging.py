"""One fact read in two documents is one stored relation whose support is both chunks, whatever the write path."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import entity_id_for
from agrag.components.data_models.extraction import Extraction
from agrag.components.data_models.graph_load import GraphLoad
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

NOTES = {
    "d1": "Victor Hale owns Osprey Ceramics.",
    "d2": "Osprey Ceramics was owned by Victor Hale until the sale.",
}
VICTOR, OSPREY = entity_id_for("Victor Hale", "Person"), entity_id_for("Osprey Ceramics")  # the typer: a Person, a name


def document(doc_id: str) -> tuple[Document, list[Chunk]]:
    doc = Document(id=doc_id, version="v1", title=f"Note {doc_id}", source_path=f"{doc_id}.md")
    text = NOTES[doc_id]
    return doc, [Chunk(chunk_id_for(doc_id, "v1", 0), doc_id, "v1", text, (doc.title,), 0, 0, len(text))]


def extract(chunks: list[Chunk]) -> Extraction:
    return LexicalEntityExtractor().run(chunks=chunks)["extraction"]


def write(graph: KuzuGraphStore, doc_id: str) -> None:
    doc, chunks = document(doc_id)
    extraction = extract(chunks)
    graph.write_chunks([doc], chunks)
    graph.upsert_entities(list(extraction.entities))
    graph.upsert_mentions(list(extraction.mentions))
    graph.upsert_relations(list(extraction.relations))
    graph.commit_documents([(doc, len(chunks))])


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    yield store
    store.close()


def the_fact(graph: KuzuGraphStore) -> tuple[str, str, str, tuple[str, ...]]:
    (relation,) = graph.relations_of(VICTOR)
    return relation.source_id, relation.type, relation.target_id, relation.chunk_ids


BOTH = (VICTOR, "owns", OSPREY, ("d1.v1.0", "d2.v1.0"))


@pytest.mark.parametrize("per_row", [False, True], ids=["batched", "one-row-a-statement"])
def test_a_fact_written_by_two_ingestions_gains_the_second_chunk(
    graph: KuzuGraphStore, monkeypatch: pytest.MonkeyPatch, per_row: bool
) -> None:
    if per_row:  # the path of a large graph: each relation found, then created or given more support
        monkeypatch.setattr(graph, "per_row_from", 0)
    write(graph, "d1")
    assert the_fact(graph) == (VICTOR, "owns", OSPREY, ("d1.v1.0",))
    write(graph, "d2")
    assert the_fact(graph) == BOTH


def test_a_fact_in_two_chunks_of_a_bulk_first_load_is_one_relation(graph: KuzuGraphStore) -> None:
    docs = [document(d) for d in NOTES]
    chunks = [c for _, cs in docs for c in cs]
    extraction = extract(chunks)
    assert len([r for r in extraction.relations if r.type == "owns"]) == 2  # one per chunk, one id
    load = GraphLoad(
        tuple(d for d, _ in docs), tuple(chunks), extraction.entities, extraction.mentions, (), extraction.relations
    )
    with graph.transaction():
        graph.bulk_load(load)
        graph.commit_documents([(d, len(cs)) for d, cs in docs])
    assert the_fact(graph) == BOTH
