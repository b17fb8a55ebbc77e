import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.errors import StoreError, StoreLockedError
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

DOC = Document(id="d1", version="v1", title="Notes", source_path="notes.md")


def chunks_of(doc: Document, texts: list[str]) -> list[Chunk]:
    out, offset = [], 0
    for order, text in enumerate(texts):
        parent = chunk_id_for(doc.id, doc.version, 0) if order else None
        out.append(
            Chunk(
                chunk_id_for(doc.id, doc.version, order),
                doc.id,
                doc.version,
                text,
                ("Notes", f"S{order}"),
                order,
                offset,
                offset + len(text),
                parent,
                doc.title,
            )
        )
        offset += len(text) + 1
    return out


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    yield store
    store.close()


def write_example(graph: KuzuGraphStore) -> list[Chunk]:
    chunks = chunks_of(DOC, ["Maria Chen wrote the Orion Planner.", "The Orion Planner uses SLAM maps."])
    graph.write_chunks([DOC], chunks)
    maria, orion = (
        Entity(entity_id_for("Maria Chen"), "Maria Chen", "Name"),
        Entity(entity_id_for("Orion Planner"), "Orion Planner", "Name"),
    )
    graph.upsert_entities([maria, orion])
    graph.upsert_mentions(
        [Mention(chunks[0].id, maria.id, 1), Mention(chunks[0].id, orion.id, 1), Mention(chunks[1].id, orion.id, 1)]
    )
    rel_id = relation_id_for(maria.id, orion.id, "RELATED_TO")
    graph.upsert_relations([Relation(rel_id, maria.id, orion.id, "RELATED_TO", (chunks[0].id,), "wrote")])
    graph.commit_documents([(DOC, len(chunks))])
    return chunks


def test_adapter_satisfies_the_graph_store_interface(graph: KuzuGraphStore) -> None:
    assert isinstance(graph, GraphStore)


def test_schema_holds_documents_chunks_entities_and_their_links(graph: KuzuGraphStore) -> None:
    write_example(graph)
    assert graph.counts() == {
        "Document": 1,
        "Chunk": 2,
        "Entity": 2,
        "HAS_CHUNK": 2,
        "NEXT": 1,
        "PARENT": 1,
        "MENTIONS": 3,
        "ABOUT": 0,
        "RELATED": 1,
    }


def test_writes_are_idempotent(graph: KuzuGraphStore) -> None:
    write_example(graph)
    before = graph.counts()
    write_example(graph)
    assert graph.counts() == before


def test_chunks_round_trip_exactly(graph: KuzuGraphStore) -> None:
    chunks = write_example(graph)
    assert graph.get_chunks([chunks[1].id, "nope", chunks[0].id]) == [chunks[1], chunks[0]]


def test_relation_support_accumulates_across_chunks(graph: KuzuGraphStore) -> None:
    chunks = write_example(graph)
    maria = entity_id_for("Maria Chen")
    orion = entity_id_for("Orion Planner")
    rel_id = relation_id_for(maria, orion, "RELATED_TO")
    graph.upsert_relations([Relation(rel_id, maria, orion, "RELATED_TO", (chunks[1].id,))])
    (relation,) = graph.relations_of(orion)
    assert (relation.source_id, relation.target_id) == (maria, orion)
    assert set(relation.chunk_ids) == {chunks[0].id, chunks[1].id}


def test_existing_entities_keep_their_first_description(graph: KuzuGraphStore) -> None:
    write_example(graph)
    eid = entity_id_for("Maria Chen")
    graph.upsert_entities([Entity(eid, "maria chen", "Other", "new text")])
    (entity,) = graph.get_entities([eid])
    assert (entity.name, entity.label) == ("Maria Chen", "Name")
    assert graph.existing_entity_ids([eid, "e-missing"]) == {eid}


def test_a_new_version_supersedes_the_old_chunks(graph: KuzuGraphStore) -> None:
    old = write_example(graph)
    new_doc = Document("d1", "v2", "Notes", "notes.md")
    superseded = graph.write_chunks([new_doc], chunks_of(new_doc, ["Maria Chen rewrote it."]))
    graph.commit_documents([(new_doc, 1)])
    assert sorted(superseded) == sorted(c.id for c in old)
    assert graph.document_versions(["d1", "d9"]) == {"d1": "v2"}
    assert graph.get_chunks([old[0].id]) == [old[0]], "old chunks stay readable"


def test_info_records_facts_about_the_data_dir(graph: KuzuGraphStore) -> None:
    graph.set_info({"embedding_model": "m", "embedding_dimension": "384"})
    graph.set_info({"embedding_dimension": "385"})
    assert graph.info() == {"embedding_model": "m", "embedding_dimension": "385"}


def test_unbound_parameters_are_refused_before_reaching_kuzu(graph: KuzuGraphStore) -> None:
    with pytest.raises(StoreError, match="not bound"):
        graph._run("MATCH (d:Document) WHERE d.id = $id RETURN d")


def test_data_persists_across_reopening(tmp_path: Path) -> None:
    store = KuzuGraphStore(tmp_path / "g.kuzu")
    write_example(store)
    store.close()
    again = KuzuGraphStore(tmp_path / "g.kuzu")
    try:
        assert again.counts()["Chunk"] == 2
    finally:
        again.close()


def test_a_second_process_gets_a_clear_lock_error(graph: KuzuGraphStore, tmp_path: Path) -> None:
    code = (
        "from pathlib import Path\n"
        "from agrag.components.stores.kuzu_graph_store import KuzuGraphStore\n"
        "from agrag.components.errors import StoreLockedError\n"
        "try:\n"
        f"    KuzuGraphStore(Path({str(tmp_path / 'graph.kuzu')!r}))\n"
        "except StoreLockedError as exc:\n"
        "    print('LOCKED', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert "LOCKED" in out.stdout
    assert "another process" in out.stdout
    assert StoreLockedError.__mro__[1] is StoreError


def test_passage_edges_cover_current_chunks_only(graph: KuzuGraphStore) -> None:
    chunks = write_example(graph)
    notes = Entity(entity_id_for("Notes"), "Notes", "Topic")
    graph.upsert_entities([notes])
    graph.upsert_about([Mention(c.id, notes.id, 1) for c in chunks])
    edges = graph.passage_edges()
    orion = entity_id_for("Orion Planner")
    assert (chunks[1].id, orion) in edges.mentions
    assert len(edges.mentions) == 3
    assert set(edges.about) == {(c.id, notes.id) for c in chunks}
    assert graph.supporting_chunk_ids([orion]) == {orion: sorted(c.id for c in chunks)}

    newer = Document(id="d1", version="v2", title="Notes", source_path="notes.md")
    graph.write_chunks([newer], chunks_of(newer, ["Rewritten without names."]))
    graph.commit_documents([(newer, 1)])
    assert graph.passage_edges().mentions == ()
    assert graph.supporting_chunk_ids([orion]) == {}


def test_every_commit_records_a_new_generation(graph: KuzuGraphStore) -> None:
    write_example(graph)
    first = graph.info()["generation"]
    graph.commit_documents([(DOC, 2)])
    assert graph.info()["generation"] != first


def test_support_lists_chunks_about_an_entity_before_chunks_that_mention_it(graph: KuzuGraphStore) -> None:
    chunks = write_example(graph)
    orion = entity_id_for("Orion Planner")
    graph.upsert_about([Mention(chunks[1].id, orion, 1)])
    assert graph.supporting_chunk_ids([orion, "e-missing"]) == {orion: [chunks[1].id, chunks[0].id]}
