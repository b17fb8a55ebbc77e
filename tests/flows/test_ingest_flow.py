import shutil
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.document import content_version, document_id_for
from agrag.components.embedders.embedding_texts import chunk_embedding_text
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import ConfigError
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.flows import ingest_tasks
from agrag.flows.ingest_flow import ingest_flow
from agrag.flows.ingest_tasks import Phase
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import load_agrag_settings, load_retrieval_settings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES


@pytest.fixture
def corpus(tmp_path: Path, examples: Path) -> Path:
    folder = tmp_path / "notes"
    shutil.copytree(examples, folder)
    return folder


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data"
    monkeypatch.setenv("AGRAG_DATA_DIR", str(path))
    return path


def test_ingest_then_rerun_writes_nothing_new(prefect_harness: None, corpus: Path, data_dir: Path) -> None:
    first = ingest_flow(str(corpus))
    assert first.documents_ingested == first.documents_seen == 9
    assert first.failures == ()
    counts = first.counts
    assert counts["Document"] == 9
    assert counts["Chunk"] == first.chunks_written > 40
    assert counts["chunk_vectors"] == counts["Chunk"] - first.chunks_by_kind.get("section", 0)
    assert counts["Entity"] == counts["entity_vectors"] == first.entities_new > 20
    assert counts["RELATED"] > 20 and counts["MENTIONS"] > counts["Entity"]
    assert counts["PARENT"] > 0 and counts["NEXT"] == counts["Chunk"] - counts["Document"]
    assert counts["Community"] == counts["community_vectors"] >= 2
    stages = ("load", "select-changed", "chunk", "extract", "prune", "resolve", "embed", "write")
    assert set(first.stage_seconds) == {*stages, "communities", "reports"}

    second = ingest_flow(str(corpus))
    assert second.counts == counts
    assert (second.documents_ingested, second.documents_unchanged, second.chunks_written) == (0, 9, 0)
    assert set(second.stage_seconds) == {"load", "select-changed"}
    assert second.seconds < first.seconds


def test_a_changed_file_supersedes_its_old_chunks(
    prefect_harness: None, corpus: Path, data_dir: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    first = ingest_flow(str(corpus))
    team = corpus / "team.md"
    team.write_text(team.read_text(encoding="utf-8") + "\n## Visitors\n\nZelda Quartermain visits in May.\n")
    second = ingest_flow(str(corpus))
    assert (second.documents_ingested, second.documents_unchanged) == (1, 8)
    assert second.chunks_superseded > 0
    assert second.counts["Document"] == 9
    assert second.counts["Chunk"] == first.counts["Chunk"] + second.chunks_written
    assert second.entities_new >= 1

    config = load_config()
    team_id, version = document_id_for("team.md", corpus.name), content_version(team.read_text(encoding="utf-8"))
    with open_knowledge_store(load_agrag_settings(), config.vector_store, embedder) as store:
        assert store.graph.document_versions([team_id]) == {team_id: version}
        results = (
            SearchEngine(store, embedder, load_retrieval_settings())
            .search_sync("Component Ownership table", config.recipe.model_copy(update={"limit": 20}))
            .results
        )
    team_chunks = [r.item for r in results if isinstance(r.item, Chunk) and r.item.document_id == team_id]
    assert team_chunks and all(c.document_version == version for c in team_chunks), "only the current version"


def test_a_bad_override_stops_before_any_store_is_touched(prefect_harness: None, corpus: Path, data_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"ingest\.chunker\.max_chrs"):
        ingest_flow(str(corpus), ["ingest.chunker.max_chrs=10"])
    assert not data_dir.exists()


def test_task_logic_runs_without_prefect(corpus: Path, tmp_path: Path) -> None:
    config = load_config()
    journal = SqlitePhaseJournal(tmp_path / "phases.sqlite")
    documents, failures = ingest_tasks.load_documents.fn(str(corpus), config.ingest)
    chunked = ingest_tasks.chunk_documents.fn(documents, config.ingest, Phase(journal, "h1"))
    chunks = chunked.value
    extracted = ingest_tasks.extract_entities.fn(
        documents, chunks, config.ingest, None, phase=Phase(journal, "h2"), progress=False
    )
    raw, chunk_failures = extracted.value.extraction, extracted.value.failures
    kept, pruned = ingest_tasks.prune_to_ontology.fn(raw, config.ingest)
    assert failures == [] and chunk_failures == [] and len(documents) == 9
    assert chunked.reused == 0 and extracted.reused == 0
    again = ingest_tasks.chunk_documents.fn(documents, config.ingest, Phase(journal, "h1"))
    assert again.reused == 9 and again.value == chunks, "a second run reads the journaled chunks back"
    other = ingest_tasks.chunk_documents.fn(documents, config.ingest, Phase(journal, "other-config"))
    assert other.reused == 0, "another configuration hash never reuses them"
    assert pruned.empty and pruned.entities_kept > 20
    extraction = kept
    names = {e.name for e in extraction.entities}
    assert {"Maria Chen", "Orion Planner", "Vega Perception", "Atlas Controller", "SLAM"} <= names
    assert chunk_embedding_text(chunks[1]).startswith(chunks[1].title)


def test_chosen_files_of_a_folder_then_the_whole_folder(
    prefect_harness: None,
    tmp_path: Path,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    embedder: SentenceTransformersTextEmbedder,
) -> None:
    root = tmp_path / "files"
    folder = root / "acme" / "notes"
    folder.mkdir(parents=True)
    for name in ("team.md", "sites.csv", "incidents.md"):
        shutil.copy(EXAMPLES / name, folder / name)
    monkeypatch.setenv("AGRAG_FILES_ROOT", str(root))
    quick = ["ingest.communities.enabled=false"]
    chosen = ingest_flow("acme/notes", quick, files=["team.md", "sites.csv", "gone.md"])
    assert (chosen.documents_seen, chosen.documents_ingested, chosen.counts["Document"]) == (2, 2, 2)
    assert [(f.source_path, f.status) for f in chosen.files] == [
        ("gone.md", "failed"),
        ("sites.csv", "ingested"),
        ("team.md", "ingested"),
    ]
    settings, vectors = load_agrag_settings(), load_config().vector_store
    ids = [document_id_for(f"acme/notes/{name}") for name in ("team.md", "sites.csv")]
    with open_knowledge_store(settings, vectors, embedder) as store:
        chosen_versions = store.graph.document_versions(ids)
    assert set(chosen_versions) == set(ids), "ids are paths relative to the files root"

    whole = ingest_flow(str(folder), quick)
    assert (whole.documents_seen, whole.documents_ingested, whole.documents_unchanged) == (3, 1, 2)
    assert whole.counts["Document"] == 3 and whole.failures == ()
    with open_knowledge_store(settings, vectors, embedder) as store:
        assert store.graph.document_versions(ids) == chosen_versions
