"""Hostile read-only Cypher and corrupted data dirs (issue 15, defects 4 and 6).

Defect 4: a query a user or a model writes may not exhaust the process. Kùzu 0.11.3 builds a list outside its buffer
pool and evaluates an expression of constants while planning, before its timeout runs, so `UNWIND range(1,100000000)`
grew a process past 22 GB. The hostile queries run in a child process watched for its memory (killed past
``CHILD_RSS_LIMIT``), so a regression fails the test instead of the CI machine.

Defect 6: a damaged data dir gives a typed error naming the damage and the fix, never a crash, an empty graph made in
its place or entity-only results; a read command changes none of its files; `agrag repair` rebuilds lost vectors.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import CorruptedStoreError, GraphQueryRefusedError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.retrievers.llm_text2cypher_retriever import LLMText2CypherRetriever
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.kuzu_open_check import FINGERPRINT_SUFFIX
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.runtime import open_runtime
from agrag.pipelines.settings import Settings
from agrag.service.cli import app
from tests.components.stores.test_kuzu_traversal import build_graph
from tests.conftest import REPO
from tests.support.data_dir_copy import copy_data_dir
from tests.support.isolated_settings import isolated_settings
from tests.support.scripted_llm import scripted_llm

CHILD_RSS_LIMIT = 1536 * 1024 * 1024
QUESTION = "Who wrote the Orion Planner?"
NOTES = {
    "planner.md": "# Orion Planner\n\nMaria Chen wrote the Orion Planner at the Lyon site. The Orion Planner plans "
    "routes for the Atlas Controller.\n\n## Inputs\n\nThe Orion Planner reads maps from Vega Perception.\n",
    "team.md": "# Team\n\nMaria Chen leads the planning team in Lyon. Tom Okafor maintains Vega Perception.\n",
}
# The child: a small graph, a 64 MB buffer pool, every hostile query; prints what each one raised, then checks the
# graph still answers and holds what it held.
CHILD = """
import json, sys
from pathlib import Path
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from tests.components.stores.test_kuzu_traversal import build_graph
store = KuzuGraphStore(Path(sys.argv[1]), buffer_pool_mb=64)
build_graph(store)
before = store.counts()
out = {}
for name, (query, caps) in json.loads(sys.argv[2]).items():
    try:
        columns, rows = store.run_read_only(query, **caps)
        out[name] = ["ok", len(rows)]
    except Exception as exc:
        out[name] = [type(exc).__name__, str(exc)]
out["after"] = [store.counts() == before, store.run_read_only("MATCH (e:Entity) RETURN count(e) AS n")[1]]
print(json.dumps(out))
"""
DOUBLING = "WITH [1, 2, 3, 4, 5, 6, 7, 8] AS l " + "WITH l + l AS l " * 22 + "RETURN size(l)"
HOSTILE = {
    "range": ("UNWIND range(1, 100000000) AS x RETURN count(x)", {}),
    "computed range": ("RETURN size(range(1, toInteger('100000000')))", {}),
    "doubling": (DOUBLING, {}),
    "huge value": ("RETURN repeat('x', 2000000) AS s", {"max_bytes": 1_000_000}),
    "buffer pool": ("UNWIND range(1, 3000) AS a UNWIND range(1, 3000) AS b RETURN size(collect(a))", {}),
    "slow": ("UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN a, b ORDER BY a * b LIMIT 1", {}),
    "many rows": ("UNWIND range(1, 50000) AS a RETURN a", {"max_rows": 10}),
    "internal table": ("MATCH (i:StoreInfo) RETURN i.key, i.value", {}),
    "internal, quoted": ("MATCH (i:`mergelog`) RETURN i", {}),
    "internal, catalog": ("CALL table_info('Candidate') RETURN *", {}),
    "unlabelled node": ("MATCH (n) RETURN n", {}),
}


def run_watched(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a child, killing it if its memory passes ``CHILD_RSS_LIMIT`` (so a regression cannot exhaust the box)."""
    # the child imports tests.* from the repository
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    started, peak = time.monotonic(), 0
    while child.poll() is None:
        try:
            status = Path(f"/proc/{child.pid}/status").read_text()
            peak = max(peak, next(int(x.split()[1]) * 1024 for x in status.splitlines() if x.startswith("VmRSS")))
        except (OSError, StopIteration):
            pass
        if peak > CHILD_RSS_LIMIT or time.monotonic() - started > timeout:
            child.kill()
            child.wait()
            pytest.fail(f"the child grew to {peak >> 20} MB or ran past {timeout} s and was killed")
        time.sleep(0.02)
    out, err = child.communicate()
    return subprocess.CompletedProcess(args, child.returncode, out, err)


@pytest.mark.needs_prefect  # runs agrag code in a subprocess
def test_defect_4_hostile_read_only_cypher_is_refused_or_stopped(tmp_path: Path) -> None:
    caps = {name: (query, {"timeout_ms": 1000, **extra}) for name, (query, extra) in HOSTILE.items()}
    done = run_watched([sys.executable, "-c", CHILD, str(tmp_path / "graph.kuzu"), json.dumps(caps)])
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    for name in ("range", "computed range", "doubling"):
        assert out[name][0] == "GraphQueryRefusedError", (name, out[name])
        assert "refused before it ran" in out[name][1]
    assert "at most 100,000 apart" in out["range"][1]
    assert "concatenates or adds 22 times" in out["doubling"][1]
    assert out["huge value"][0] == "GraphQueryTooLargeError"
    assert "more than 1,000,000 bytes" in out["huge value"][1] and "substring" in out["huge value"][1]
    assert out["buffer pool"][0] == "GraphQueryTooLargeError"
    assert "buffer pool (64 MB)" in out["buffer pool"][1] and "AGRAG_KUZU_BUFFER_POOL_MB" in out["buffer pool"][1]
    assert out["slow"][0] == "GraphQueryTimeoutError" and "longer than 1000 ms" in out["slow"][1]
    assert out["many rows"] == ["ok", 10]
    for name in ("internal table", "internal, quoted", "internal, catalog"):
        assert out[name][0] == "GraphQueryRefusedError", (name, out[name])
        assert "internal table" in out[name][1]
    assert out["unlabelled node"][0] == "GraphQueryRefusedError" and "(n:Entity)" in out["unlabelled node"][1]
    assert out["after"] == [True, [[7]]]  # nothing stored was lost, and the store still answers


@pytest.mark.parametrize(
    "hostile",
    [
        "MATCH (i:StoreInfo) RETURN i.key AS key, i.value AS value",
        "MATCH (n) RETURN n",
        "RETURN repeat('x', 5000000) AS s",  # 5 MB: past the 4 MB result cap, harmless if the cap regressed
    ],
)
def test_defect_4_text2cypher_gets_the_typed_refusal_and_the_graph_stays(tmp_path: Path, hostile: str) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")
    build_graph(graph)
    before = graph.counts()
    try:
        with scripted_llm(lambda messages: json.dumps({"cypher": hostile})) as server:
            llm = OpenAIChatClient(server.base_url, model="scripted", timeout_seconds=10, max_retries=0)
            out = LLMText2CypherRetriever(graph, llm).run("What does the store record about itself?")
        assert out["results"] == []
        status = out["status"]
        assert not status.ok  # type: ignore[attr-defined]
        error = status.error  # type: ignore[attr-defined]
        assert error.startswith("Text2CypherError") and ("refused" in error or "bytes" in error), error
        assert "refused" in server.prompts[1] or "bytes" in server.prompts[1]  # the repair prompt names the cap
        assert graph.counts() == before
        assert graph.run_read_only("MATCH (e:Entity) RETURN count(e) AS n")[1] == [[7]]
    finally:
        graph.close()


def test_defect_4_the_schema_shown_and_the_tables_readable_agree(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")
    build_graph(graph)
    try:
        schema = graph.schema_text()
        for table in ("StoreInfo", "MergeLog", "Candidate"):
            assert table not in schema
            with pytest.raises(GraphQueryRefusedError, match="internal table"):
                graph.run_read_only(f"MATCH (x:{table.upper()}) RETURN count(x)")
        assert graph.run_read_only("MATCH (d:Entity)-[r]->(b) RETURN count(r)")[1][0][0] > 0  # a bound end is fine
    finally:
        graph.close()


# ---- defect 6: corrupted stores -------------------------------------------------------------------------------


def settings_for(data_dir: Path) -> Settings:
    return isolated_settings(data_dir)


@pytest.fixture(scope="module")
def pristine(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Path:
    """A small data dir, ingested once; each test works on a copy."""
    root = tmp_path_factory.mktemp("corrupted")
    folder = root / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    data_dir = root / "data"
    with open_runtime([], settings_for(data_dir), require_data=False, embedder=embedder) as runtime:
        ingest_into(str(folder), runtime.config, runtime.store, embedder)
        assert runtime.store.counts()["chunk_vectors"] > 0
    return data_dir


@pytest.fixture
def data_dir(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    copy_data_dir(pristine, copy)
    return copy


def store_files(data_dir: Path) -> dict[str, str]:
    """Every store file's hash; agrag's own lock and open-check records, rewritten by every opener, left out."""
    return {
        str(p.relative_to(data_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(data_dir.rglob("*"))
        if p.is_file() and p.name != ".agrag.lock" and not p.name.endswith(FINGERPRINT_SUFFIX)
    }


def vector_files(data_dir: Path) -> dict[str, str]:
    """The vector shards' files (Kùzu may rewrite a few header bytes of the graph file whenever it closes it)."""
    return {name: digest for name, digest in store_files(data_dir).items() if name.startswith("vectors")}


def graph_content(data_dir: Path) -> tuple[dict[str, int], dict[str, str]]:
    """The graph's row counts per table and its recorded facts, read without writing."""
    graph = KuzuGraphStore(data_dir / "graph.kuzu", read_only=True)
    try:
        return graph.check_readable(), graph.info()
    finally:
        graph.close()


def searched(data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> tuple[set[str], dict[str, int]]:
    with open_runtime([], settings_for(data_dir), embedder=embedder) as runtime:
        response = runtime.engine.search_sync(QUESTION, runtime.config.recipe)
        return {type(r.item).__name__ for r in response.results}, runtime.store.counts()


# What every entry point does first (through open_runtime and open_knowledge_store): open the graph store.
OPEN_IN_CHILD = """
import sys
from pathlib import Path
from agrag.components.errors import AgragError
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
try:
    KuzuGraphStore(Path(sys.argv[1]) / "graph.kuzu", buffer_pool_mb=256).close()
except AgragError as exc:
    print(type(exc).__name__, exc)
    sys.exit(1)
"""


def test_defect_6_random_bytes_in_the_graph_give_a_message_not_a_crash(data_dir: Path) -> None:
    graph = data_dir / "graph.kuzu"
    # Every page after the header: wherever the last checkpoint put the catalog and the table metadata, they are gone
    # (Kùzu 0.11.3 crashes opening such a file, SIGSEGV).
    size = graph.stat().st_size
    with graph.open("r+b") as file:
        file.seek(4096)
        file.write(b"\xa5" * (size - 4096))
    before = store_files(data_dir)
    done = run_watched([sys.executable, "-c", OPEN_IN_CHILD, str(data_dir)])
    assert done.returncode == 1, (done.returncode, done.stderr[-1500:])  # not -11 (exit 139 from a shell)
    assert done.stdout.startswith("CorruptedStoreError"), done.stdout
    assert "graph file graph.kuzu cannot be read" in done.stdout and "new data dir" in done.stdout
    assert store_files(data_dir) == before


def test_defect_6_an_empty_graph_file_is_refused_not_replaced(
    data_dir: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    (data_dir / "graph.kuzu").write_bytes(b"")
    before = store_files(data_dir)
    with pytest.raises(CorruptedStoreError, match=r"graph\.kuzu is empty \(0 bytes\)"):
        open_runtime([], settings_for(data_dir), embedder=embedder)
    with pytest.raises(CorruptedStoreError):  # an ingestion into it is refused too
        open_runtime([], settings_for(data_dir), require_data=False, embedder=embedder)
    assert store_files(data_dir) == before
    assert (data_dir / "graph.kuzu").stat().st_size == 0


@pytest.mark.parametrize("damage", ["deleted", "emptied"])
def test_defect_6_lost_chunk_vectors_are_refused_then_repaired(
    pristine: Path, data_dir: Path, embedder: SentenceTransformersTextEmbedder, damage: str
) -> None:
    kinds, counts = searched(pristine, embedder)
    assert "Chunk" in kinds
    if damage == "deleted":
        shutil.rmtree(data_dir / "vectors" / "chunks")
    else:  # a shard that opens, but holds nothing
        with open_runtime([], settings_for(data_dir), embedder=embedder, check_vectors=False) as runtime:
            runtime.store.chunks.delete(runtime.store.graph.searchable_chunk_ids())
    before, content = vector_files(data_dir), graph_content(data_dir)
    for require_data in (True, False):  # a read command, and a re-ingest (which must not call every file unchanged)
        with pytest.raises(CorruptedStoreError) as refused:
            open_runtime([], settings_for(data_dir), require_data=require_data, embedder=embedder)
        assert "chunks vectors" in str(refused.value), refused.value
        assert "`agrag repair`" in str(refused.value)
    assert graph_content(data_dir) == content  # nothing stored in the graph was lost or changed
    if damage == "deleted":  # the read left the damage as it was: no empty shard made in its place
        assert vector_files(data_dir) == before
        assert not (data_dir / "vectors" / "chunks").exists()

    result = CliRunner().invoke(app, ["repair"], env={"AGRAG_DATA_DIR": str(data_dir)})
    assert result.exit_code == 0, result.output
    assert "Repaired: embedded again" in result.output
    assert searched(data_dir, embedder) == (kinds, counts)
    again = CliRunner().invoke(app, ["repair"], env={"AGRAG_DATA_DIR": str(data_dir)})
    assert "Nothing to repair" in again.output


def test_defect_6_the_open_check_runs_only_when_the_graph_file_changed(
    data_dir: Path, embedder: SentenceTransformersTextEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    children: list[object] = []
    real_run = subprocess.run

    def counting(*args: object, **kwargs: object) -> object:
        children.append(args)
        return real_run(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "run", counting)
    searched(data_dir, embedder)  # a copied data dir: its fingerprint is of another inode, so it is checked
    assert len(children) == 1
    searched(data_dir, embedder)  # closed cleanly by agrag since: not checked again
    assert len(children) == 1
