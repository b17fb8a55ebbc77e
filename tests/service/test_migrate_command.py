"""`agrag migrate-vectors` as a user runs it: through a pipe, with its refusals, and without loading a model."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.runtime import open_runtime
from agrag.service.cli import app
from agrag.service.server.server_file import remove_server_file, write_server_file
from tests.conftest import EXAMPLES
from tests.support.data_dir_copy import copy_data_dir
from tests.support.isolated_settings import isolated_settings

# The CLI in a child whose stdout is a pipe; on its way out it says whether anything loaded an embedding model.
CHILD = """
import sys
from agrag.service.cli import main
sys.argv = ["agrag", *sys.argv[1:]]
try:
    main()
finally:
    embedder = sys.modules.get("agrag.components.embedders.sentence_transformers_text_embedder")
    loaded = bool(getattr(embedder, "_MODELS", None)) or "sentence_transformers" in sys.modules
    print("model loaded:", loaded, file=sys.stderr)
"""


@pytest.fixture(scope="module")
def corpus(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Path:
    """Two example notes on Qdrant Edge."""
    root = tmp_path_factory.mktemp("migrate-cli")
    folder = root / "notes"
    folder.mkdir()
    for name in ("orion_planner.md", "team.md"):
        shutil.copy(EXAMPLES / name, folder / name)
    settings = isolated_settings(root / "data")
    with open_runtime([], settings, require_data=False, embedder=embedder) as runtime:
        ingest_into(str(folder), runtime.config, runtime.store, embedder)
    return root / "data"


@pytest.fixture
def data_dir(corpus: Path, tmp_path: Path) -> Path:
    return copy_data_dir(corpus, tmp_path / "data")


def agrag(data_dir: Path, monkeypatch: pytest.MonkeyPatch, *args: str, qdrant: bool = True) -> tuple[int, str]:
    monkeypatch.setenv("AGRAG_DATA_DIR", str(data_dir))
    if qdrant:
        monkeypatch.setenv("AGRAG_QDRANT_PATH", str(data_dir.parent / "qdrant"))
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_through_a_pipe_each_slice_is_a_line_and_no_model_loads(data_dir: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_", "PREFECT_API_"))}
    env.pop("COLUMNS", None)
    env |= {"AGRAG_DATA_DIR": str(data_dir), "AGRAG_QDRANT_PATH": str(tmp_path / "qdrant")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "migrate-vectors"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    copied = [line for line in lines if line.endswith("points copied")]
    assert [line.split(":")[0] for line in copied] == ["chunks", "entities", "communities", "facts"]
    for line in copied:
        _name, n, _of, m, *_rest = line.replace(":", "").split()
        assert n == m and int(n) > 0, line
    summary = next(line for line in lines if line.startswith("Migrated: "))
    assert "copied to agrag_chunks, agrag_entities, agrag_communities, agrag_facts" in summary
    assert any("vector_store=qdrant and AGRAG_QDRANT_PATH=" in line for line in lines)
    kept = next(line for line in lines if line.startswith("The Qdrant Edge shards were kept at "))
    assert "vectors.edge-" in kept and "delete that folder" in kept
    assert "\x1b[" not in done.stdout, "plain lines through a pipe"
    assert "model loaded: False" in done.stderr, "the vectors are copied, not embedded"


def test_after_the_migration_commands_need_the_override(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = agrag(data_dir, monkeypatch, "migrate-vectors")
    assert code == 0, out
    code, out = agrag(data_dir, monkeypatch, "search", "Who wrote the Orion Planner?", "vector_store=qdrant")
    assert code == 0 and "Maria Chen" in out, out
    code, out = agrag(data_dir, monkeypatch, "status")
    assert code == 2 and "Add the override vector_store=qdrant" in out and "Traceback" not in out, out
    code, out = agrag(data_dir, monkeypatch, "migrate-vectors")
    assert code == 2 and "nothing to migrate" in out and "Traceback" not in out, out


def test_without_a_server_the_command_says_what_to_set(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = agrag(data_dir, monkeypatch, "migrate-vectors", qdrant=False)
    assert code == 2 and "Traceback" not in out, out
    assert "set AGRAG_QDRANT_URL" in " ".join(out.split()) and "AGRAG_QDRANT_PATH" in out
    code, out = agrag(data_dir, monkeypatch, "migrate-vectors", "vector_store.no_such_key=1")
    assert code == 2 and "no_such_key" in out and "Traceback" not in out, out


def test_a_data_dir_agrag_serve_holds_is_refused(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = DataDirLock(data_dir)  # this process stands in for the server: it holds the lock and wrote the file
    lock.acquire()
    write_server_file(data_dir, "http://127.0.0.1:9", "token-0123456789abcdef")
    try:
        code, out = agrag(data_dir, monkeypatch, "migrate-vectors")
    finally:
        remove_server_file(data_dir)
        lock.release()
    assert code == 1 and "agrag serve holds the data dir" in out and "stop it" in out, out
    assert (data_dir / "vectors" / "chunks").is_dir()
