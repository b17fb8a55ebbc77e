import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.community import Community, CommunityReport, Finding, community_id_for
from agrag.components.data_models.document import Document
from agrag.components.data_models.document_structure import TableCell
from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.data_models.resolution import KEPT_APART, MERGED, MergeDecision, ResolutionCandidate
from agrag.components.errors import MergeNotFoundError, StoreError, StoreLockedError
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
        "MergeLog": 0,
        "Candidate": 0,
        "Community": 0,
        "IN_COMMUNITY": 0,
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
    assert graph.get_chunks([old[0].id]) == [replace(old[0], current=False)], "old chunks stay readable, superseded"
    again = graph.write_chunks([new_doc], chunks_of(new_doc, ["Maria Chen rewrote it."]))
    assert sorted(again) == sorted(superseded), "a write run again still names every older chunk, to retire"
    assert graph.document_chunk_ids("d1", "v1") == [c.id for c in old]
    assert sorted(graph.document_chunk_ids("d1")) == sorted([*superseded, *graph.document_chunk_ids("d1", "v2")])
    assert graph.document_chunk_ids("d9") == []


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


@pytest.mark.needs_prefect  # runs agrag code in a subprocess
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


def test_table_chunks_round_trip_with_their_cells(graph: KuzuGraphStore) -> None:
    doc = Document("d2", "v1", "Owners", "owners.csv")
    text = "Component,Owner\nOrion Planner,Maria Chen\n"
    cells = (TableCell(0, 0, 0, 9), TableCell(0, 1, 10, 15), TableCell(1, 0, 16, 29), TableCell(1, 1, 30, 40))
    table = Chunk(
        chunk_id_for("d2", "v1", 0), "d2", "v1", text.strip(), ("Owners",), 0, 0, 40, None, "Owners", "table", cells
    )
    graph.write_chunks([doc], [table])
    assert graph.get_chunks([table.id]) == []  # not committed yet
    graph.commit_documents([(doc, 1)])
    (stored,) = graph.get_chunks([table.id])
    assert stored == table
    assert [text[c.start : c.end] for c in stored.cells] == ["Component", "Owner", "Orion Planner", "Maria Chen"]


def test_a_merge_points_the_member_at_the_resolved_entity_and_an_undo_restores_it(graph: KuzuGraphStore) -> None:
    chunks = write_example(graph)
    maria = entity_id_for("Maria Chen")
    typo = Entity(entity_id_for("Maria Chenn"), "Maria Chenn", "Name")
    graph.upsert_entities([typo])
    graph.upsert_mentions([Mention(chunks[1].id, typo.id, 1)])
    decision = MergeDecision(typo.id, maria, MERGED, "fuzzy", 95.0, "names 95% alike")
    graph.apply_resolution([decision], [], run_id="run1")
    assert [e.id for e in graph.canonical_entities()] == sorted([maria, entity_id_for("Orion Planner")])
    assert graph.supporting_chunk_ids([maria])[maria] == [chunks[0].id, chunks[1].id]
    assert graph.supporting_chunk_ids([maria], limit=2)[maria] == [chunks[0].id, chunks[1].id]  # the member's too
    assert (chunks[1].id, maria) in graph.passage_edges().mentions
    (entry,) = graph.merge_log()
    assert (entry.member_name, entry.resolved_name, entry.rule, entry.undone) == (
        "Maria Chenn",
        "Maria Chen",
        "fuzzy",
        False,
    )

    (undone,) = graph.undo_merge(typo.id)
    assert undone.undone
    assert graph.supporting_chunk_ids([maria])[maria] == [chunks[0].id]
    assert graph.supporting_chunk_ids([typo.id])[typo.id] == [chunks[1].id]
    assert typo.id in {e.id for e in graph.canonical_entities()}
    with pytest.raises(MergeNotFoundError, match="agrag merges list"):
        graph.undo_merge(typo.id)


def test_kept_apart_decisions_and_candidates_are_stored(graph: KuzuGraphStore) -> None:
    write_example(graph)
    maria = entity_id_for("Maria Chen")
    orion = entity_id_for("Orion Planner")
    kept = MergeDecision(orion, maria, KEPT_APART, "homonym", 1.0, "labels differ")
    near = ResolutionCandidate(maria, orion, "Maria Chen", "Orion Planner", 86.0, "fuzzy")
    graph.apply_resolution([kept], [near, near], run_id="run1")
    assert [e.decision for e in graph.merge_log()] == [KEPT_APART]
    assert graph.candidates() == [near]
    assert len(graph.canonical_entities()) == 2


def test_communities_replace_the_previous_hierarchy(graph: KuzuGraphStore) -> None:
    write_example(graph)
    maria, orion = entity_id_for("Maria Chen"), entity_id_for("Orion Planner")
    ids, edges = graph.entity_graph()
    assert ids == sorted([maria, orion])
    assert edges == [(maria, orion, 1.0)]
    report = CommunityReport("Maria Chen and Orion Planner", "Maria Chen wrote it.", 4.0, (Finding("a", "b"),))
    top = Community(community_id_for(0, (maria, orion)), 0, tuple(sorted((maria, orion))), None, report)
    graph.replace_communities([top])
    graph.replace_communities([top])
    assert graph.communities() == [top]
    assert graph.counts()["IN_COMMUNITY"] == 2
    entities, relations, chunks, mentions = graph.community_inputs([maria, orion])
    assert {e.id for e in entities} == {maria, orion}
    assert len(relations) == 1
    assert {c.id for c in chunks} == {c for c, _ in mentions}


def test_a_community_whose_entities_were_all_removed_reads_back_with_no_members(graph: KuzuGraphStore) -> None:
    write_example(graph)
    members = tuple(sorted({entity_id_for("Maria Chen"), entity_id_for("Orion Planner")}))
    graph.replace_communities([Community(community_id_for(0, members), 0, members)])
    removed = graph.retire_chunks(graph.delete_document(DOC.id)).removed  # as `agrag delete` does
    assert set(removed) == set(members), "no other text names them: both leave the graph"
    assert [c.entity_ids for c in graph.communities()] == [()]
