"""A data dir made before facts were searchable: it opens, `agrag status` says what to do, `agrag repair` does it."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from agrag.components.data_models.fact import Fact
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.runtime import open_runtime
from agrag.pipelines.store_status import store_status
from agrag.service.cli import app
from tests.service.conftest import copy_corpus, settings_of
from tests.support.store_dump import fact_vectors, facts_of_graph

QUESTION = "Who wrote the Orion Planner?"


def _facts(data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> list[tuple[str, tuple[str, ...]]]:
    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        results = runtime.engine.search_sync(QUESTION, load_recipe("fact")).results
    return [(r.item.id, r.item.chunk_ids) for r in results if isinstance(r.item, Fact)]


def test_an_old_data_dir_gets_its_facts_from_agrag_repair(
    tmp_path: Path, ingested_corpus: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    data_dir = copy_corpus(ingested_corpus, tmp_path)
    found = _facts(data_dir, embedder)
    assert found
    shutil.rmtree(data_dir / "vectors" / "facts")  # as a data dir made before the collection existed

    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:  # opens, the collection made empty
        status = store_status(runtime.store)
        assert status.facts == 0 and status.facts_unsearchable == len(runtime.store.graph.supported_facts()) > 0
    assert _facts(data_dir, embedder) == []
    env = {"AGRAG_DATA_DIR": str(data_dir)}
    said = " ".join(CliRunner().invoke(app, ["status"], env=env).output.split())
    assert f"{status.facts_unsearchable} relations have no fact vector yet" in said and "`agrag repair`" in said

    repaired = CliRunner().invoke(app, ["repair"], env=env)
    assert repaired.exit_code == 0, repaired.output
    assert "Found: the facts vectors hold 0 points" in repaired.output
    assert f"embedded again {status.facts_unsearchable} facts" in repaired.output
    assert _facts(data_dir, embedder) == found, "the fact search finds what it found before"
    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        assert fact_vectors(runtime.store) == facts_of_graph(runtime.store)
        assert store_status(runtime.store).facts_unsearchable == 0
    assert "Nothing to repair" in CliRunner().invoke(app, ["repair"], env=env).output
