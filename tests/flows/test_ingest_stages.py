"""Every ingestion stage on the example corpus, offline and with a scripted LLM, plus bad files and homonyms."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.resolution import KEPT_APART, MERGED
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import LLMBudgetError, LLMNotConfiguredError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.llm.sqlite_llm_cache import SqliteLLMCache
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.ingest_report import FAILED, INGESTED, IngestReport
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES
from tests.support import example_llm
from tests.support.scripted_llm import ScriptedLLM, scripted_llm


@pytest.fixture
def store(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[KnowledgeStore]:
    opened = open_knowledge_store(AgragSettings(data_dir=tmp_path / "data"), load_config().vector_store, embedder)
    yield opened
    opened.close()


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm(example_llm.answer) as server:
        yield server


def client(server: ScriptedLLM) -> OpenAIChatClient:
    return OpenAIChatClient(server.base_url, "scripted", max_retries=0)


def extraction_requests(server: ScriptedLLM) -> list[dict[str, object]]:
    return [r for r in server.requests if "knowledge graph from documents" in r["messages"][0]["content"]]


def assert_graph_was_built(report: IngestReport, store: KnowledgeStore) -> None:
    assert report.documents_ingested == report.documents_seen == 9
    assert report.failures == ()
    assert {"text", "table"} <= set(report.chunks_by_kind)
    assert report.entities_found > 10 and report.relations_found > 5
    assert report.communities_by_level.get(0, 0) >= 2
    communities = store.graph.communities()
    assert len(communities) == sum(report.communities_by_level.values())
    assert all(c.report and c.report.title and c.report.summary for c in communities)
    assert report.counts["community_vectors"] == len(communities)
    assert report.counts["IN_COMMUNITY"] >= 2 * report.communities_by_level[0]
    stages = ("load", "chunk", "extract", "prune", "resolve", "embed", "write", "communities", "reports")
    assert set(stages) <= set(report.stage_seconds)


def test_example_corpus_offline(
    prefect_harness: None, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    config = load_config(["ingest/ontology=engineering"])
    report = ingest_into(str(EXAMPLES), config, store, embedder)

    assert_graph_was_built(report, store)
    assert report.reports_by_method == {"extractive": sum(report.communities_by_level.values())}
    # The lexical extractor types names in the ontology's words (a product is a Component); engineering declares no
    # Date, so the dates are pruned and the report says so.
    assert [d.label for d in report.pruned.dropped_labels] == ["Date"]
    assert report.pruned.entities_kept == report.entities_found and report.pruned.entities_dropped >= 1
    labels = {e.label for e in store.graph.canonical_entities()}
    assert {"Person", "Organization", "Component"} <= labels and "Date" not in labels
    merged = [e for e in store.graph.merge_log() if e.decision == MERGED]
    assert report.merges == len(merged) >= 1
    assert {"CAN", "Controller Area Network"} in [{e.member_name, e.resolved_name} for e in merged]
    sources = [" ".join(c.text.split()) for c in store.graph.get_chunks(_all_chunk_ids(store))]
    for community in store.graph.communities()[:3]:
        assert community.report is not None
        opening = " ".join(community.report.summary.split())[:40]
        assert any(opening in text for text in sources), "extractive summaries quote the sources"


def _all_chunk_ids(store: KnowledgeStore) -> list[str]:
    return sorted({c for c, _ in store.graph.passage_edges().mentions})


def test_example_corpus_with_a_scripted_llm(
    prefect_harness: None, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder, llm: ScriptedLLM
) -> None:
    config = load_config(["ingest/extractor=llm", "ingest/ontology=engineering", "ingest.extractor.concurrency=2"])
    report = ingest_into(str(EXAMPLES), config, store, embedder, llm=client(llm))

    assert_graph_was_built(report, store)
    assert report.extraction_failures == ()
    labels = {e.label for e in store.graph.canonical_entities()}
    assert {"Person", "Component", "Location"} <= labels and "Date" not in labels
    pruned = report.pruned
    assert [(d.label, d.example) for d in pruned.dropped_labels] == [("Date", "2024")]
    assert [(p.type, p.source_label, p.target_label) for p in pruned.undeclared_patterns] == [
        ("MENTORS", "Person", "Person")
    ]
    assert pruned.unknown_endpoints >= 1 and "Replanning Storm" in pruned.unknown_endpoint_example
    merged = [{e.member_name, e.resolved_name} for e in store.graph.merge_log() if e.decision == MERGED]
    assert report.merges == len(merged)
    assert {"SLAM", "Simultaneous Localization and Mapping"} in merged
    assert {"ROS", "Robot Operating System"} in merged
    assert set(report.reports_by_method) == {"llm"}
    assert all(c.report and c.report.title.endswith("(LLM)") for c in store.graph.communities())
    searchable = report.chunks_written - report.chunks_by_kind.get("section", 0)
    assert len(extraction_requests(llm)) == 2 * searchable  # one ask and one gleaning round per searchable chunk


def test_bad_files_fail_one_by_one_and_the_rest_ingests(
    prefect_harness: None, tmp_path: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(EXAMPLES / "team.md", folder / "team.md")
    shutil.copy(EXAMPLES / "sites.csv", folder / "sites.csv")
    (folder / "blob.txt").write_bytes(b"\x00\x01binary\x00" * 50)
    (folder / "empty.md").write_text("")
    (folder / "zero.pdf").write_bytes(b"")
    (folder / "latin1.md").write_bytes("# Café\n\nNo UTF-8 here: caf\xe9".encode("latin-1"))
    outside = tmp_path / "secret.txt"
    outside.write_text("Do not read me.")
    os.symlink(outside, folder / "link.txt")
    (folder / "big.txt").write_text("word " * 800)
    config = load_config(["ingest.loader.max_file_bytes=3000"])

    report = ingest_into(str(folder), config, store, embedder)

    statuses = {f.source_path: (f.status, f.reason) for f in report.files}
    assert statuses["team.md"] == (INGESTED, "")
    assert statuses["sites.csv"] == (INGESTED, "")
    assert statuses["blob.txt"] == (FAILED, "binary file, not text")
    assert statuses["empty.md"] == (FAILED, "empty file")
    assert statuses["zero.pdf"] == (FAILED, "empty file")
    assert statuses["latin1.md"][1].startswith("not valid UTF-8")
    assert statuses["link.txt"] == (FAILED, "symlink leads outside the ingested folder")
    assert statuses["big.txt"][1].startswith("4000 bytes is over the limit of 3000")
    assert report.counts["Document"] == 2
    assert "Do not read me" not in json.dumps([c.text for c in store.graph.get_chunks(_all_chunk_ids(store))])


HOMONYMS = {
    "jordan_engineer.md": "# Platform Team\n\nJordan Lee is the engineer who wrote the Atlas Controller firmware.\n",
    "jordan_vendor.md": "# Vendors\n\nJordan Lee is the robotics vendor that ships the Atlas Controller board.\n",
    "atlas.md": "# Atlas Controller\n\nThe Atlas Controller runs the PID loops of every robot.\n",
}


def homonym_script(messages: list[dict[str, str]]) -> str:
    if "knowledge graph from documents" not in messages[0]["content"]:
        return example_llm.answer(messages)
    if "were missed" in messages[-1]["content"]:
        return '{"entities": [], "relations": []}'
    passage = messages[1]["content"]
    entities = [{"name": "Atlas Controller", "label": "Component", "description": "The motor controller."}]
    if "engineer" in passage:
        entities.append({"name": "Jordan Lee", "label": "Person", "description": "An engineer."})
    elif "vendor" in passage:
        entities.append({"name": "Jordan Lee", "label": "Organization", "description": "A robotics vendor."})
    relations = [{"source": "Jordan Lee", "target": "Atlas Controller", "type": "RELATED_TO", "description": ""}]
    return json.dumps({"entities": entities, "relations": relations if len(entities) > 1 else []})


def _homonym_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "homonyms"
    folder.mkdir()
    for name, text in HOMONYMS.items():
        (folder / name).write_text(text)
    return folder


def test_homonyms_stay_apart_and_an_undone_merge_restores_both_entities(
    prefect_harness: None, tmp_path: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = _homonym_folder(tmp_path)
    config = load_config(["ingest/extractor=llm", "ingest/ontology=engineering"])
    with scripted_llm(homonym_script) as server:
        report = ingest_into(str(folder), config, store, embedder, llm=client(server))

    jordans = [e for e in store.graph.canonical_entities() if e.name == "Jordan Lee"]
    assert sorted(e.label for e in jordans) == ["Organization", "Person"]
    log = store.graph.merge_log()
    (apart,) = [e for e in log if e.decision == KEPT_APART]
    assert "Organization" in apart.reason and "Person" in apart.reason
    assert report.kept_apart == 1

    (fold,) = [e for e in log if e.decision == MERGED and e.member_name == "Atlas Controller"]
    atlas_ids = {fold.member_id, fold.resolved_id}
    assert len(atlas_ids) == 2
    assert fold.member_id not in {e.id for e in store.graph.canonical_entities()}
    hits = store.entities.query(embedder.embed_batch(["Atlas Controller"])[0], "Atlas Controller", 10)
    assert fold.member_id not in {h.id for h in hits if h.payload["status"] == "current"}

    (undone,) = store.undo_merge(fold.id)
    assert undone.undone and undone.member_id == fold.member_id
    assert atlas_ids <= {e.id for e in store.graph.canonical_entities()}
    assert store.graph.supporting_chunk_ids([fold.member_id])[fold.member_id]
    (point,) = store.entities.fetch([fold.member_id])
    assert point.payload["status"] == "current"


def test_an_llm_step_without_an_llm_fails_before_any_work(
    prefect_harness: None, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    with pytest.raises(LLMNotConfiguredError, match="AGRAG_LLM_BASE_URL"):
        ingest_into(str(EXAMPLES), load_config(["ingest/extractor=llm"]), store, embedder)
    assert store.counts()["Document"] == 0


def test_an_llm_ingest_over_the_call_limit_stops_before_any_call(
    prefect_harness: None, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder, llm: ScriptedLLM
) -> None:
    config = load_config(["ingest/extractor=llm", "ingest.max_llm_calls=10"])
    with pytest.raises(LLMBudgetError, match=r"up to \d+ LLM calls \(about [\d,]+ prompt tokens\)") as info:
        ingest_into(str(EXAMPLES), config, store, embedder, llm=client(llm))
    assert "ingest.max_llm_calls=10" in str(info.value) and "Nothing was sent" in str(info.value)
    assert info.value.estimate.calls > 10
    assert llm.requests == []
    assert store.counts()["Document"] == store.counts()["Chunk"] == 0


def test_cached_answers_are_never_paid_for_twice(
    prefect_harness: None, tmp_path: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = _homonym_folder(tmp_path)
    config = load_config(["ingest/extractor=llm", "ingest/ontology=engineering", "ingest.max_llm_calls=6"])
    cache = SqliteLLMCache(tmp_path / "llm-cache.sqlite")
    with scripted_llm(homonym_script) as server:
        cached_client = OpenAIChatClient(server.base_url, "scripted", max_retries=0, cache=cache)
        ingest_into(str(folder), config, store, embedder, llm=cached_client)
        first = len(extraction_requests(server))
        assert first == 2 * len(HOMONYMS)  # one ask and one gleaning round per chunk

        (folder / "atlas.md").write_text(HOMONYMS["atlas.md"] + "\nThe Atlas Controller also reads the CAN bus.\n")
        (folder / "atlas copy.md").write_text(HOMONYMS["jordan_vendor.md"])  # same text as a file already sent
        report = ingest_into(str(folder), config, store, embedder, llm=cached_client)
    assert report.documents_ingested == 2
    assert len(extraction_requests(server)) - first == 2, "only the changed chunk is sent; the copy is cached"
    assert report.llm_cache_hits >= 2 and report.llm_calls >= 2
    assert cached_client.cache_hits >= 1


def test_what_only_the_old_text_supported_leaves_the_current_graph(
    prefect_harness: None, tmp_path: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = tmp_path / "notes"
    shutil.copytree(EXAMPLES, folder)
    team = folder / "team.md"
    original = team.read_text(encoding="utf-8")
    team.write_text(original + "\n## Visitors\n\nZelda Quartermain visits Maria Chen in May.\n", encoding="utf-8")
    config = load_config()
    ingest_into(str(folder), config, store, embedder)
    zelda = next(e for e in store.graph.canonical_entities() if e.name == "Zelda Quartermain")
    visit = store.graph.supporting_chunk_ids([zelda.id])[zelda.id][0]
    maria = next(e for e in store.graph.canonical_entities() if e.name == "Maria Chen")
    assert any(zelda.id in (r.source_id, r.target_id) for r in store.graph.relations_of(maria.id))

    team.write_text(original, encoding="utf-8")
    report = ingest_into(str(folder), config, store, embedder)

    assert report.documents_ingested == 1 and report.entities_removed >= 1
    assert zelda.id not in {e.id for e in store.graph.canonical_entities()}
    assert store.entities.existing_ids([zelda.id]) == set()
    assert not any(zelda.id in (r.source_id, r.target_id) for r in store.graph.relations_of(maria.id))
    assert all(visit not in r.chunk_ids for r in store.graph.relations_of(maria.id))
    (old,) = store.graph.get_chunks([visit])
    assert "Zelda Quartermain" in old.text, "the old version's chunk still resolves"
    assert {c for c, _ in store.graph.passage_edges().mentions}.isdisjoint({visit})
    assert maria.id in {e.id for e in store.graph.canonical_entities()}, "what other text supports stays"


def test_deleting_a_document_removes_its_contribution_and_keeps_the_others(
    prefect_harness: None, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    from agrag.components.data_models.document import document_id_for
    from agrag.components.errors import DocumentNotFoundError
    from agrag.flows.delete_flow import delete_from

    config = load_config()
    ingest_into(str(EXAMPLES), config, store, embedder)
    vendors = document_id_for("vendors.html", "acme_notes")
    names = {e.name: e.id for e in store.graph.canonical_entities()}
    only_vendors, shared = names["Northlight Optics"], names["Tomas Eriksen"]
    vendor_chunks = [c for c in _all_chunk_ids(store) if c.startswith(vendors)]
    before = store.counts()

    report = delete_from(vendors, config, store, embedder)

    assert report.chunks_retired >= len(vendor_chunks) > 0 and report.entities_removed >= 2
    remaining = {e.id for e in store.graph.canonical_entities()}
    assert only_vendors not in remaining and shared in remaining
    assert store.entities.existing_ids([only_vendors]) == set()
    assert all(only_vendors not in c.entity_ids for c in store.graph.communities())
    assert all(not set(r.chunk_ids) & set(vendor_chunks) for r in store.graph.relations_of(shared))
    assert store.graph.document_versions([vendors]) == {vendors: ""}
    assert [c.id for c in store.graph.get_chunks(vendor_chunks)] == vendor_chunks, "its text stays readable by id"
    assert store.counts()["Document"] == before["Document"]
    assert store.counts()["Entity"] < before["Entity"]
    with pytest.raises(DocumentNotFoundError, match="dnope"):
        delete_from("dnope", config, store, embedder)
