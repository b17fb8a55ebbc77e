"""The bulk first load: a large first ingestion into an empty data dir, its graph copied in one transaction.

It must store exactly what the commit batches store, hand over to the batches for every later run, and leave the
graph empty when killed inside its transaction, so the run after it writes it all again.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.graph_load import GraphLoad
from agrag.components.data_models.phase_key import PhaseKey
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import StoreError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.vector_store import VectorCollection
from agrag.flows.ingest_flow import ingest_flow
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES
from tests.support.store_dump import dump

REPO = Path(__file__).resolve().parents[2]
# What is compared is how the graph and the vectors are written; hashed vectors (no model) keep each run to that.
HASHED = "embedder=hashed"
BULK = ["ingest.bulk_load_min_chunks=1", HASHED]
SMALL_BATCHES = "ingest.write_batch_chunks=5"
BATCHES = ["ingest.bulk_load_min_chunks=null", SMALL_BATCHES, HASHED]
KILL_POINT = "commit_documents:1"  # the Qdrant and Kùzu writes after the COPY, all in the open transaction


def open_store(data_dir: Path) -> KnowledgeStore:
    embedder = SentenceTransformersTextEmbedder("hashed-384", backend="hashed")
    return open_knowledge_store(AgragSettings(data_dir=data_dir, _env_file=None), load_config().vector_store, embedder)


class BulkLoads:
    """Counts the real ``bulk_load`` calls of this process."""

    def __init__(self) -> None:
        self.calls = 0


@pytest.fixture
def bulk_loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[BulkLoads]:
    seen = BulkLoads()
    original = KuzuGraphStore.bulk_load

    def counted(self: KuzuGraphStore, *args: Any, **kwargs: Any) -> None:
        seen.calls += 1
        original(self, *args, **kwargs)

    monkeypatch.setattr(KuzuGraphStore, "bulk_load", counted)
    yield seen


def _journaled_phases(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The phases journaled in this process from now on, in order."""
    phases: list[str] = []
    original = SqlitePhaseJournal.save_many

    def recorded(self: SqlitePhaseJournal, items: Sequence[tuple[PhaseKey, Any]]) -> None:
        phases.extend(key.phase for key, _ in items)
        original(self, items)

    monkeypatch.setattr(SqlitePhaseJournal, "save_many", recorded)
    return phases


def _ingest(corpus: Path, data_dir: Path, overrides: list[str]) -> None:
    ingest_flow(str(corpus), overrides, data_dir=str(data_dir), progress_bar=False)


def _dump(data_dir: Path) -> dict[str, Any]:
    with open_store(data_dir) as store:
        return dump(store)


@pytest.fixture(scope="module")
def batched(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The example corpus written in commit batches of about 5 chunks: what the bulk load must equal."""
    data_dir = tmp_path_factory.mktemp("batched") / "data"
    _ingest(EXAMPLES, data_dir, BATCHES)
    return _dump(data_dir)


def test_a_bulk_first_load_stores_what_batches_store_and_later_runs_write_in_batches(
    prefect_harness: None,
    bulk_loads: BulkLoads,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    corpus = tmp_path / "notes"
    shutil.copytree(EXAMPLES, corpus)
    (corpus / "team.md").unlink()
    journaled = _journaled_phases(monkeypatch)
    _ingest(corpus, tmp_path / "bulk", BULK)
    assert bulk_loads.calls == 1
    # killed, a bulk load commits nothing: its resolution is made again, never stored; offline extraction never is
    assert "embed" in journaled and "resolve" not in journaled and "extract" not in journaled
    journaled.clear()
    # a first load smaller than the setting is written in commit batches of about 5 chunks
    _ingest(corpus, tmp_path / "batches", [SMALL_BATCHES, "ingest.bulk_load_min_chunks=100000", HASHED])
    assert bulk_loads.calls == 1
    assert "resolve" in journaled and "extract" not in journaled, "batches resume with the journaled resolution"
    first = _dump(tmp_path / "bulk")
    assert first["merge_log"] and first["relations"] and first["mentions"], "the corpus exercises every table"
    assert first == _dump(tmp_path / "batches"), "the bulk load stores exactly what batches store"
    shutil.copy(EXAMPLES / "team.md", corpus / "team.md")  # a new document
    with (corpus / "incidents.md").open("a", encoding="utf-8") as notes:  # and a new version of a stored one
        notes.write("\n\n## Follow-up\n\nMaria Chen reviewed the replanning storm in Lyon with the Atlas team.\n")
    # after the bulk load, links go one statement a row (as in a large graph); the other side writes them by UNWIND
    for data_dir, per_row_from in ((tmp_path / "bulk", 0), (tmp_path / "batches", KuzuGraphStore.per_row_from)):
        monkeypatch.setattr(KuzuGraphStore, "per_row_from", per_row_from)
        _ingest(corpus, data_dir, BULK)
    assert bulk_loads.calls == 1, "a graph that holds documents is written in batches"
    after_bulk = _dump(tmp_path / "bulk")
    assert after_bulk == _dump(tmp_path / "batches")
    assert any(not row[2] for row in after_bulk["chunks"]), "the edited document's older chunks were superseded"


def test_a_bulk_load_refuses_a_graph_that_holds_documents_or_runs_outside_a_transaction(
    batched: dict[str, Any], tmp_path: Path
) -> None:
    empty = GraphLoad((), (), (), (), (), ())
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")
    try:
        with pytest.raises(StoreError, match="inside the store's transaction"):
            graph.bulk_load(empty)
        with graph.transaction():
            graph.bulk_load(empty)
        assert graph.graph_is_empty()
        graph.upsert_entities([Entity(id="e1", name="Ada", label="Person")])
        with pytest.raises(StoreError, match="needs an empty graph"), graph.transaction():
            graph.bulk_load(empty)
    finally:
        graph.close()


def _fails_leaving_the_graph_empty(data_dir: Path, *, error: str) -> None:
    """A bulk ingestion that fails with ``error`` (patched in by the caller) keeps nothing of its transaction."""
    with pytest.raises(Exception, match=error):
        _ingest(EXAMPLES, data_dir, BULK)
    with open_store(data_dir) as store:
        assert store.graph.graph_is_empty(), "nothing of the failed transaction was kept"


def test_an_error_inside_the_transaction_leaves_the_graph_empty_and_the_next_run_loads_it(
    batched: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    original = KuzuGraphStore.commit_documents

    def failing(self: KuzuGraphStore, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        raise StoreError("the disk is full")

    with monkeypatch.context() as patch:
        patch.setattr(KuzuGraphStore, "commit_documents", failing)
        _fails_leaving_the_graph_empty(tmp_path / "data", error="the disk is full")
    _ingest(EXAMPLES, tmp_path / "data", BULK)
    assert _dump(tmp_path / "data") == batched


def test_a_vector_write_that_fails_before_the_copy_commits_nothing_of_the_graph(
    batched: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The vectors are written before the graph's copy: when they fail, the graph is not touched."""
    original = QdrantEdgeVectorStore.upsert
    copies: list[int] = []

    def failing(self: QdrantEdgeVectorStore, points: Any, status: str | None = None) -> None:
        if self.collection is VectorCollection.ENTITIES:
            raise StoreError("the vector disk is full")
        original(self, points, status)

    def counted(self: KuzuGraphStore, *args: Any, **kwargs: Any) -> None:
        copies.append(1)

    with monkeypatch.context() as patch:
        patch.setattr(QdrantEdgeVectorStore, "upsert", failing)
        patch.setattr(KuzuGraphStore, "bulk_load", counted)
        _fails_leaving_the_graph_empty(tmp_path / "data", error="the vector disk is full")
    assert copies == [], "the graph's copy did not start"
    _ingest(EXAMPLES, tmp_path / "data", BULK)
    assert _dump(tmp_path / "data") == batched


@pytest.mark.needs_prefect
def test_the_bulk_copy_starts_with_every_vector_written_and_the_points_released(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What the copy sees: both collections whole, and none of the embed stage's points still held by the flow."""
    from agrag.flows import write_tasks
    from agrag.flows.embed_task import EmbeddedPoints

    held: list[EmbeddedPoints] = []
    stores: list[KnowledgeStore] = []
    seen: dict[str, int] = {}
    original_write, original_load = write_tasks.write_stores.fn, KuzuGraphStore.bulk_load

    def recording_write(store: KnowledgeStore, *args: Any, **kwargs: Any) -> Any:
        held.append(args[3])
        stores.append(store)
        return original_write(store, *args, **kwargs)

    def recording_load(self: KuzuGraphStore, load: GraphLoad) -> None:
        seen["held"] = len(held[0].chunks) + len(held[0].entities)
        seen["chunk_vectors"], seen["entity_vectors"] = stores[0].chunks.count(), stores[0].entities.count()
        original_load(self, load)

    monkeypatch.setattr(write_tasks.write_stores, "fn", recording_write)
    monkeypatch.setattr(KuzuGraphStore, "bulk_load", recording_load)
    _ingest(EXAMPLES, tmp_path / "data", BULK)
    with open_store(tmp_path / "data") as store:
        counts = store.counts()
    assert seen["held"] == 0, "the flow's points were emptied before the copy"
    assert counts["chunk_vectors"] > 0 and counts["entity_vectors"] > 0
    assert (seen["chunk_vectors"], seen["entity_vectors"]) == (counts["chunk_vectors"], counts["entity_vectors"])


@pytest.mark.slow
def test_a_run_killed_inside_the_bulk_transaction_is_written_again_whole(
    batched: dict[str, Any], tmp_path: Path
) -> None:
    import os

    from prefect.settings import PREFECT_API_URL

    data_dir = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_"))}
    env |= {"AGRAG_DATA_DIR": str(data_dir), "PREFECT_API_URL": str(PREFECT_API_URL.value()), "PYTHONPATH": str(REPO)}
    killed = subprocess.run(
        [sys.executable, "-m", "tests.support.die_during_write", KILL_POINT, "ingest", str(EXAMPLES), *BULK],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, f"{KILL_POINT}: {killed.stdout}\n{killed.stderr}"
    with open_store(data_dir) as store:
        assert store.graph.graph_is_empty(), "the killed transaction left nothing in the graph"
    _ingest(EXAMPLES, data_dir, BULK)
    assert _dump(data_dir) == batched
