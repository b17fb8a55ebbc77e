"""Under one files root, a folder and later its subfolder give one document per file (ids relative to the root)."""

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.loaders import folder_loader
from agrag.components.loaders.loader_errors import ListingTooLargeError
from agrag.flows.ingest_flow import ingest_flow
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import load_agrag_settings
from agrag.pipelines.store_factory import open_knowledge_store
from agrag.service.cli import app


@pytest.mark.slow
def test_a_folder_then_its_subfolder_gives_one_document_per_file(
    prefect_harness: None,
    tmp_path: Path,
    examples: Path,
    monkeypatch: pytest.MonkeyPatch,
    embedder: SentenceTransformersTextEmbedder,
) -> None:
    root = tmp_path / "files"
    shutil.copytree(examples, root / "examples" / "acme_notes")  # the repository's examples/, under the root
    names = sorted(path.name for path in examples.iterdir())
    monkeypatch.setenv("AGRAG_FILES_ROOT", str(root))
    monkeypatch.setenv("AGRAG_DATA_DIR", str(tmp_path / "data"))
    quick = ["ingest.communities.enabled=false"]

    parent = ingest_flow("examples", quick)
    assert parent.failures == () and parent.documents_ingested == len(names) == 9
    assert [(f.source_path, f.status) for f in parent.files] == [(f"acme_notes/{n}", "ingested") for n in names]

    child = ingest_flow("examples/acme_notes", quick)
    assert child.failures == () and (child.documents_seen, child.documents_ingested) == (9, 0)
    assert [(f.source_path, f.status) for f in child.files] == [(n, "unchanged") for n in names]
    assert child.counts == parent.counts, "nothing was added: no second document, chunk or vector"
    assert child.counts["Document"] == 9

    ids = {document_id_for(f"examples/acme_notes/{n}") for n in names}
    with open_knowledge_store(load_agrag_settings(), load_config().vector_store, embedder) as store:
        stored = store.graph.documents(None, limit=1000)
    assert sorted(d.id for d in stored) == sorted(ids), "one document per file, its id the path below the root"

    listed = CliRunner().invoke(app, ["documents"])
    assert listed.exit_code == 0, listed.output
    assert all(listed.output.count(document_id) == 1 for document_id in ids), listed.output

    monkeypatch.setattr(folder_loader, "MAX_LISTED_ENTRIES", 5)  # examples/ holds acme_notes and its 9 files
    with pytest.raises(ListingTooLargeError, match="holds more than 5 files and folders"):
        ingest_flow("examples", quick)
