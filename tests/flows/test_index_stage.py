"""The ``index`` stage: collections past ``vector_store.indexing_threshold_kb`` are indexed for search, and no
search answers differently.

The example corpus (about 60 chunk vectors) stays under the default threshold; ``indexing_threshold_kb=1`` makes
every collection due, as a million chunks would be under the default.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_store import VectorCollection
from agrag.flows.finalize_flow import NOTHING_STALE, finalize_into
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.ingest_report import stage_lines
from agrag.pipelines.runtime import open_runtime
from agrag.pipelines.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.data_dir_copy import copy_data_dir
from tests.support.isolated_settings import isolated_settings
from tests.support.recipe_answers import assert_same_answers, recipe_answers

DUE = "vector_store.indexing_threshold_kb=1"


def _pending(store: KnowledgeStore) -> set[VectorCollection]:
    return {c for c in VectorCollection if store.vectors(c).index_pending()}


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Path:
    """The example corpus ingested with the default threshold: nothing was due, so no index stage ran."""
    root = tmp_path_factory.mktemp("unindexed")
    shutil.copytree(EXAMPLES, root / "notes")
    with open_runtime([], isolated_settings(root / "data"), require_data=False, embedder=embedder) as runtime:
        report = ingest_into(str(root / "notes"), runtime.config, runtime.store, embedder)
        assert "index" not in report.stage_seconds and report.vectors_indexed == {}
        assert _pending(runtime.store) == set()
    return root


@pytest.fixture
def settings(built: Path, tmp_path: Path) -> Settings:
    copy_data_dir(built / "data", tmp_path / "data")
    shutil.copytree(built / "notes", tmp_path / "notes")
    return isolated_settings(tmp_path / "data")


def test_finalize_indexes_a_data_dir_and_every_answer_stays(
    settings: Settings, embedder: SentenceTransformersTextEmbedder
) -> None:
    with open_runtime([], settings, embedder=embedder) as runtime:
        before = recipe_answers(runtime, embedder)
        counts = runtime.store.counts()
    with open_runtime([DUE], settings, embedder=embedder) as runtime:
        assert _pending(runtime.store) == set(VectorCollection)
        report = finalize_into(runtime.config, runtime.store, embedder)
        assert _pending(runtime.store) == set()
        after = recipe_answers(runtime, embedder)
    indexed = (
        f"{counts['chunk_vectors']} chunk, {counts['entity_vectors']} entity, {counts['community_vectors']} report, "
        f"{counts['fact_vectors']} fact vectors indexed for search"
    )
    assert (report.finalized, report.message) == (False, f"{NOTHING_STALE}; {indexed}")
    assert report.stage_seconds is not None and set(report.stage_seconds) == {"index"}
    assert_same_answers(before, after)
    with open_runtime([], settings, embedder=embedder) as runtime:  # reopened with the defaults: still indexed
        assert _pending(runtime.store) == set()
        assert_same_answers(before, recipe_answers(runtime, embedder))
        again = finalize_into(runtime.config, runtime.store, embedder)
    assert (again.message, again.stage_seconds) == (NOTHING_STALE, None), "nothing left: no stage, no line"


def test_ingestions_past_the_threshold_index_what_they_wrote_and_it_is_found(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> None:
    notes = tmp_path / "notes"
    shutil.copytree(EXAMPLES, notes)
    settings = isolated_settings(tmp_path / "data")
    with open_runtime([DUE], settings, require_data=False, embedder=embedder) as runtime:
        first = ingest_into(str(notes), runtime.config, runtime.store, embedder)
        team = notes / "team.md"
        team.write_text(team.read_text(encoding="utf-8") + "\n## Visitors\n\nZelda Quartermain visits in May.\n")
        second = ingest_into(str(notes), runtime.config, runtime.store, embedder)
        assert _pending(runtime.store) == set()
        found = runtime.engine.search_sync("Zelda Quartermain visits", runtime.config_for(["recipe=chunk"]).recipe)
        unchanged = ingest_into(str(notes), runtime.config, runtime.store, embedder)
    assert set(first.vectors_indexed) == {c.value for c in VectorCollection}
    assert {"chunks", "entities"} <= set(second.vectors_indexed), "the changed note's chunks and its new entity"
    for report in (first, second):
        assert list(report.stage_seconds)[-1] == "index"
        assert report.vectors_indexed["chunks"] == report.counts["chunk_vectors"]
        assert stage_lines(report)["index"].endswith("vectors indexed for search")
    assert second.documents_ingested == 1
    top = found.results[0].item
    assert isinstance(top, Chunk) and "Zelda Quartermain" in top.text and top.current
    assert unchanged.documents_ingested == 0 and "index" not in unchanged.stage_seconds
