"""The ``fact`` method on a real ingested data dir: facts with their passages, kept current, inside a scope."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.retrievers.fact_matches import match_facts
from agrag.components.retrievers.qdrant_fact_retriever import QdrantFactRetriever
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows.delete_flow import delete_from
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.reextract_flow import reextract_into
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import AgragSettings, RetrievalSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.support.store_dump import fact_vectors, facts_of_graph

FACT = load_recipe("fact")
CERAMICS = "# Ceramics suppliers\n\nVictor Hale owns Osprey Ceramics in Tarnby.\n\nThe kiln runs on Fridays.\n"
CERAMICS_V2 = "# Ceramics suppliers\n\nMarta Lund bought Osprey Ceramics in Tarnby.\n\nThe kiln runs on Fridays.\n"
LAB = "# Lab notes\n\nLena Berg runs the Krill Laboratory.\n\nVictor Hale owns Osprey Ceramics, she says.\n"


@pytest.fixture
def store(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[KnowledgeStore]:
    opened = open_knowledge_store(AgragSettings(data_dir=tmp_path / "data"), load_config().vector_store, embedder)
    yield opened
    opened.close()


def _facts(
    store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder, query: str, **filters: tuple[str, ...]
) -> list[Fact]:
    engine = SearchEngine(store, embedder, RetrievalSettings())
    results = engine.search_sync(query, FACT, SearchFilters(**filters) if filters else None).results
    assert all(isinstance(r.item, Fact) for r in results)
    return [r.item for r in results]  # type: ignore[misc]


def _pairs(facts: list[Fact]) -> set[tuple[str, str]]:
    return {(f.source, f.target) for f in facts} | {(f.target, f.source) for f in facts}


def test_a_fact_is_found_with_its_passage_and_follows_updates_and_deletes(
    prefect_harness: None, tmp_path: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    note = folder / "ceramics.md"
    note.write_text(CERAMICS, encoding="utf-8")
    ingest_into(str(folder), load_config(), store, embedder)
    doc = document_id_for("ceramics.md", folder.name)

    found = _facts(store, embedder, "Who owns Osprey Ceramics?")
    # offline, the sentence's three names give three facts, all RELATED_TO: the one asked for is among the first two
    first = next(f for f in found[:2] if {f.source, f.target} == {"Victor Hale", "Osprey Ceramics"})
    assert "Victor Hale" in first.statement and f"-[{first.type}]->" in first.statement
    assert [p.document_id for p in first.passages] == [doc] and first.passages[0].current
    assert "Victor Hale owns Osprey Ceramics" in first.passages[0].text
    assert first.chunk_ids == tuple(p.id for p in first.passages)
    old_passage = first.passages[0].id

    note.write_text(CERAMICS_V2, encoding="utf-8")  # a new version: Victor Hale is no longer named with it
    ingest_into(str(folder), load_config(), store, embedder)
    found = _facts(store, embedder, "Who owns Osprey Ceramics?")
    assert ("Victor Hale", "Osprey Ceramics") not in _pairs(found), "the superseded version's fact is gone"
    assert ("Marta Lund", "Osprey Ceramics") in _pairs(found)
    assert all(old_passage not in f.chunk_ids and all(p.current for p in f.passages) for f in found)
    assert fact_vectors(store) == facts_of_graph(store)

    delete_from(doc, load_config(), store, embedder)
    assert _facts(store, embedder, "Who owns Osprey Ceramics?") == []
    assert fact_vectors(store) == facts_of_graph(store) == []


def test_a_reextraction_replaces_the_facts_of_its_chunks(
    prefect_harness: None, tmp_path: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "lab.md").write_text(LAB, encoding="utf-8")
    ingest_into(str(folder), load_config(), store, embedder)
    assert ("Lena Berg", "Krill Laboratory") in _pairs(_facts(store, embedder, "Who runs the Krill Laboratory?"))
    # names of fewer than 10 characters are no entities now: Lena Berg (9) and her fact leave the graph
    reextract_into(None, load_config(["ingest.extractor.min_name_length=10"]), store, embedder, force=True)
    found = _facts(store, embedder, "Who runs the Krill Laboratory?")
    assert ("Lena Berg", "Krill Laboratory") not in _pairs(found)
    assert fact_vectors(store) == facts_of_graph(store) != []


def test_a_scoped_search_never_returns_a_fact_of_another_document(
    prefect_harness: None, tmp_path: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "ceramics.md").write_text(CERAMICS, encoding="utf-8")
    (folder / "lab.md").write_text(LAB, encoding="utf-8")
    ingest_into(str(folder), load_config(), store, embedder)
    ceramics, lab = (document_id_for(name, folder.name) for name in ("ceramics.md", "lab.md"))

    everywhere = _facts(store, embedder, "Who owns Osprey Ceramics?")
    shared = next(f for f in everywhere if {f.source, f.target} == {"Victor Hale", "Osprey Ceramics"})
    assert {p.document_id for p in shared.passages} == {ceramics, lab}, "both notes state it"
    for question in ("Who owns Osprey Ceramics?", "Who runs the Krill Laboratory?", "kiln Fridays"):
        scoped = _facts(store, embedder, question, document_ids=(lab,))
        assert all(p.document_id == lab for f in scoped for p in f.passages), question
        # a fact some other document also states is not shown inside the scope: its sentence may be that document's
        assert shared.id not in {f.id for f in scoped}, question
    assert ("Lena Berg", "Krill Laboratory") in _pairs(
        _facts(store, embedder, "Who runs the Krill Laboratory?", document_ids=(lab,))
    )
    vector = Embedding(tuple(embedder.embed_query("Who runs the Krill Laboratory?")))
    matches = match_facts(store.facts, vector.values, 10, SearchFilters(document_ids=(lab,)))
    assert matches and all(m.chunk_ids and all(c.startswith(f"{lab}.") for c in m.chunk_ids) for m in matches)
    assert all(-1.0 <= m.similarity <= 1.0 for m in matches)
    assert [m.similarity for m in matches] == sorted((m.similarity for m in matches), reverse=True)
    retriever = QdrantFactRetriever(store.facts, graph=store.graph, top_k=5)
    out = retriever.run(query="Osprey Ceramics", query_embedding=vector, filters=SearchFilters(document_ids=("nope",)))
    assert out["status"].ok and out["results"] == []
