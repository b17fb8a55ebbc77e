"""Updates and deletes: old versions stay readable, only touched work is redone, a killed delete completes."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.llm.sqlite_llm_cache import SqliteLLMCache
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows.delete_flow import delete_from
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES
from tests.support import synthetic_corpus
from tests.support.scripted_llm import scripted_llm

LLM_OVERRIDES = ["ingest/extractor=llm", "ingest/ontology=open"]


@pytest.fixture
def store(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[KnowledgeStore]:
    opened = open_knowledge_store(AgragSettings(data_dir=tmp_path / "data"), load_config().vector_store, embedder)
    yield opened
    opened.close()


def _entities_of(store: KnowledgeStore, document_id: str) -> set[str]:
    edges = store.graph.passage_edges()
    return {e for c, e in (*edges.mentions, *edges.about) if c.startswith(f"{document_id}.")}


def test_an_update_refreshes_only_what_the_changed_file_touched(
    prefect_harness: None, tmp_path: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = tmp_path / "notes"
    synthetic_corpus.write_corpus(folder, 30)
    note = folder / "note_005.md"
    original = note.read_text(encoding="utf-8")
    note.write_text(original + f"\n## Visitors\n\n{synthetic_corpus.VISITOR} toured the site.\n", encoding="utf-8")
    doc = document_id_for("note_005.md", folder.name)
    config = load_config(LLM_OVERRIDES)
    with scripted_llm(synthetic_corpus.answer) as server:
        llm = OpenAIChatClient(server.base_url, "scripted", max_retries=0, cache=SqliteLLMCache(tmp_path / "c.sqlite"))
        ingest_into(str(folder), config, store, embedder, llm=llm)
        visitor = next(e for e in store.graph.canonical_entities() if e.name == synthetic_corpus.VISITOR)
        (old_version,) = store.graph.document_versions([doc]).values()
        old_chunks = store.graph.document_chunk_ids(doc, old_version)
        before = {c.id: c for c in store.graph.communities()}
        touched = _entities_of(store, doc)

        note.write_text(original, encoding="utf-8")
        report = ingest_into(str(folder), config, store, embedder, llm=llm)

    assert report.documents_ingested == 1 and report.documents_unchanged == 29
    assert report.llm_estimate is not None
    assert report.llm_estimate.items == report.chunks_by_kind["text"], "no other document is re-extracted"
    resolved = store.graph.get_chunks(old_chunks)
    assert [c.id for c in resolved] == old_chunks and not any(c.current for c in resolved), "old ids say superseded"
    (new_version,) = store.graph.document_versions([doc]).values()
    assert new_version != old_version
    new_chunks = store.graph.get_chunks(store.graph.document_chunk_ids(doc, new_version))
    assert new_chunks and all(c.current for c in new_chunks)
    assert visitor.id not in {e.id for e in store.graph.canonical_entities()}, "only the removed text named her"
    assert store.entities.existing_ids([visitor.id]) == set()
    after = store.graph.communities()
    assert all(visitor.id not in c.entity_ids for c in after)
    touched |= _entities_of(store, doc)
    untouched = [c for c in after if c.id in before and touched.isdisjoint(c.entity_ids)]
    assert 0 < report.reports_reused == len(untouched) < len(after), "only communities around the note are redone"
    assert all(c.report == before[c.id].report for c in untouched)


def test_a_delete_killed_half_way_completes_when_run_again(
    prefect_harness: None, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    config = load_config()
    ingest_into(str(EXAMPLES), config, store, embedder)
    vendors = document_id_for("vendors.html", EXAMPLES.name)
    only_vendors = next(e.id for e in store.graph.canonical_entities() if e.name == "Northlight Optics")
    store.graph.delete_document(vendors)  # a delete killed right after marking the document

    assert only_vendors in {e.id for e in store.graph.canonical_entities()}, "nothing was retired yet"
    report = delete_from(vendors, config, store, embedder)

    assert report.entities_removed >= 1
    assert only_vendors not in {e.id for e in store.graph.canonical_entities()}
    assert store.entities.existing_ids([only_vendors]) == set()
    assert all(only_vendors not in c.entity_ids for c in store.graph.communities())
    assert all(not c.current for c in store.graph.get_chunks(store.graph.document_chunk_ids(vendors)))


def test_unchanged_files_ingested_with_other_settings_are_named(
    prefect_harness: None, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    ingest_into(str(EXAMPLES), load_config(), store, embedder)
    before = store.counts()

    report = ingest_into(str(EXAMPLES), load_config(["ingest.chunker.max_chars=800"]), store, embedder)

    assert report.documents_ingested == 0 and len(report.other_settings) == 9
    assert "team.md" in {Path(p).name for p in report.other_settings}
    assert store.counts() == before, "skipped, not silently rebuilt"
    same = ingest_into(str(EXAMPLES), load_config(), store, embedder)
    assert same.other_settings == ()


def test_an_update_keeps_a_merged_entity_the_new_version_still_names(
    prefect_harness: None, tmp_path: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = tmp_path / "notes"
    shutil.copytree(EXAMPLES, folder)
    config = load_config()
    ingest_into(str(folder), config, store, embedder)
    merge = next(e for e in store.graph.merge_log() if e.member_name == "Controller Area Network")
    glossary = folder / "glossary.txt"
    glossary.write_text(glossary.read_text(encoding="utf-8") + "\nLIDAR: light detection and ranging.\n")

    report = ingest_into(str(folder), config, store, embedder)

    assert report.documents_ingested == 1
    (version,) = store.graph.document_versions([document_id_for("glossary.txt", folder.name)]).values()
    support = store.graph.supporting_chunk_ids([merge.resolved_id])[merge.resolved_id]
    assert any(f".{version}." in chunk for chunk in support), "the new version's mention of the member counts"
    assert merge.member_id in store.graph.existing_entity_ids([merge.member_id]), "the member is not deleted"
    assert any(e.id == merge.id and not e.undone for e in store.graph.merge_log()), "and stays merged"
