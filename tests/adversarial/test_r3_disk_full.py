"""Full disks (issue 43, defect 5): a typed NoSpaceLeftError before and during writes, reads that need no room.

A hostile probe filled the disk of a data dir: with 1 MB free, `agrag ingest`, `agrag status` and `agrag search`
died with SIGBUS (exit 135) opening the Qdrant Edge shards, and `agrag repair` with 76 MB free filled the disk with a
set-aside copy. Here each test mounts a small tmpfs (root only; skipped elsewhere, with the reason), restores a
data dir of two example notes into it, fills the disk with a file at a chosen moment and runs the real `agrag` in a
child process (a SIGBUS kills only the child), with Prefect's home on another disk. A tmpfs is the harder case: reading
a hole of a mapped file allocates the page there, so opening a shard takes room that ext4 would not ask for. The
commands are forked from a process that imported agrag once (``tests/support/kill_points.py``), each 3 s of CPU
less than a new `agrag` process.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from agrag.components.data_models.ontology_additions import LabelSpec, OntologyAdditions
from agrag.components.data_models.phase_key import PhaseKey
from agrag.components.disk_space_errors import NoSpaceLeftError, size_text
from agrag.components.stores.disk_space import BYTES_PER_POINT, free_bytes, memory_backed
from agrag.components.stores.json_ontology_store import JsonOntologyStore
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.vector_store import VectorCollection
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.runtime import open_runtime
from tests.conftest import EXAMPLES
from tests.service.mcp.conftest import call, client
from tests.service.server.test_serve_command import Serve
from tests.support.data_dir_copy import copy_data_dir
from tests.support.fill_during_write import fill, fill_after
from tests.support.isolated_settings import isolated_settings
from tests.support.kill_points import run_agrag

# Each test runs `agrag` in child processes on a tmpfs it mounts.
pytestmark = [pytest.mark.slow, pytest.mark.needs_prefect]

HASHED = "embedder=hashed"  # no model to load: each command starts in seconds
QUESTION = "Who wrote the Orion Planner?"
NOTES = ("orion_planner.md", "team.md")
MORE_NOTES = ("vega_perception.md", "release_2_4.md", "incidents.md")
DISK_MB = 320
MB = 1024 * 1024
ADMIN = "admin-token-0123456789abcdef"


@dataclass
class SmallDisk:
    """A tmpfs of ``DISK_MB`` with a data dir on it, and a filler file that takes the rest of its room."""

    root: Path
    prefect_home: Path
    commands: int = 0

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def filler(self) -> Path:
        return self.root / "filler"

    def restore(self, pristine: Path) -> Path:
        """Put a copy of ``pristine`` (holes kept) on the disk as its data dir."""
        shutil.rmtree(self.data_dir, ignore_errors=True)
        return copy_data_dir(pristine, self.data_dir)

    def ingest_here(self, folder: Path) -> None:
        """Ingest ``folder`` into a new data dir on this disk (in this process, while the disk has room)."""
        with open_runtime([HASHED], isolated_settings(self.data_dir), require_data=False) as runtime:
            ingest_into(str(folder), runtime.config, runtime.store, runtime.ingest_embedder())

    def documents(self) -> int:
        """How many documents the data dir holds, read in this process (every vector collection checked)."""
        with open_runtime([HASHED], isolated_settings(self.data_dir)) as runtime:
            return runtime.store.graph.counts()["Document"]

    def fill(self, leave: int) -> None:
        """Take every byte of the disk but ``leave``."""
        fill(str(self.filler), leave)
        free = self.free()
        assert leave - MB // 4 <= free <= leave, free

    def empty(self) -> None:
        self.filler.unlink(missing_ok=True)

    def free(self) -> int:
        free = free_bytes(self.root)
        assert free is not None
        return free

    def env(self, **extra: str) -> dict[str, str]:
        """A user's shell with the data dir on this disk and Prefect's home elsewhere."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_", "PREFECT_API_"))}
        env.pop("COLUMNS", None)
        return {**env, "AGRAG_DATA_DIR": str(self.data_dir), "PREFECT_HOME": str(self.prefect_home), **extra}

    def agrag(
        self, *args: str, setup: Callable[[], object] | None = None, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        """``agrag ARGS`` on the data dir here, forked from a warm process; ``extra`` adds to its environment and
        ``setup`` runs in it first. Its API is the session's Prefect server, its Prefect home the fork server's."""
        from prefect.settings import PREFECT_API_URL

        self.commands += 1
        out, err = (self.root.parent / f"agrag-{self.commands}.{stream}" for stream in ("out", "err"))
        api = str(PREFECT_API_URL.value())
        code = run_agrag(
            list(args),
            data_dir=self.data_dir,
            log=out,
            stderr=err,
            prefect_api_url=api,
            env=extra,
            timeout=180,
            setup=setup,
            cwd=self.root.parent,
        )
        done = subprocess.CompletedProcess(args, code, out.read_text(encoding="utf-8"), err.read_text(encoding="utf-8"))
        assert code != -signal.SIGBUS and "Bus error" not in done.stderr, (args, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (args, done.stderr[-3000:])
        return done


def flat(text: str) -> str:
    return " ".join(text.split())


def notes(tmp_path: Path) -> Path:
    """A folder of the two example notes."""
    folder = tmp_path / "notes"
    folder.mkdir(exist_ok=True)
    for name in NOTES:
        shutil.copy(EXAMPLES / name, folder / name)
    return folder


def more_notes(folder: Path) -> Path:
    """``folder`` with one note changed and three new ones: what an ingestion after the first would write."""
    for name in MORE_NOTES:
        shutil.copy(EXAMPLES / name, folder / name)
    with (folder / "team.md").open("a", encoding="utf-8") as note:
        note.write("\nIrene Alvarez joined the planning team in Lyon to work on the Orion Planner.\n")
    return folder


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> Path:
    """Two example notes ingested with the hashed embedder, on the ordinary disk (the shards' files keep holes)."""
    root = tmp_path_factory.mktemp("disk-full")
    data_dir = root / "data"
    with open_runtime([HASHED], isolated_settings(data_dir), require_data=False) as runtime:
        ingest_into(str(notes(root)), runtime.config, runtime.store, runtime.ingest_embedder())
    return data_dir


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """A fresh tmpfs mounted for this test (as root), unmounted after it."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    root = tmp_path / "disk"
    root.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(root)]
    mounted = subprocess.run(mount, capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        assert memory_backed(root)
        yield SmallDisk(root, tmp_path / "prefect")
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)


def test_r3_defect_5_reads_work_on_a_full_disk(disk: SmallDisk, prefect_harness: None, tmp_path: Path) -> None:
    disk.ingest_here(notes(tmp_path))  # its shards written, never opened since
    disk.fill(leave=MB)
    status = disk.agrag("status", "--json", HASHED)
    search = disk.agrag("search", QUESTION, "--json", HASHED)
    documents = disk.agrag("documents", HASHED)
    discover = disk.agrag("evidence", "discover", "Orion Planner", HASHED)
    assert [status.returncode, search.returncode, documents.returncode, discover.returncode] == [0, 0, 0, 0], (
        status.stderr + search.stderr + documents.stderr + discover.stderr
    )
    assert json.loads(status.stdout)["documents"] == len(NOTES)
    assert "Maria Chen" in search.stdout
    assert "orion_planner.md" in flat(documents.stdout) and "team.md" in flat(documents.stdout)
    assert "Orion Planner" in discover.stdout
    assert disk.free() > MB // 2  # reads took at most a few pages


def test_r3_defect_5_a_data_dir_that_needs_room_to_open_is_refused_with_the_room_not_a_crash(
    disk: SmallDisk, pristine: Path
) -> None:
    # Copied here and never opened on this disk: opening its shards would allocate their holes (tens of MB).
    disk.restore(pristine)
    needed = sum(QdrantEdgeVectorStore.open_room(disk.data_dir / "vectors" / c.value) for c in VectorCollection)
    assert needed > 10 * MB
    disk.fill(leave=MB)
    refused = disk.agrag("status", HASHED)
    assert refused.returncode == 1
    message = flat(refused.stderr)
    assert "Not enough free disk space to open the data dir" in message, message
    assert f"on the disk of {disk.data_dir}" in message and "Nothing was changed" in message
    assert "Free at least" in message and "AGRAG_DATA_DIR" in message
    assert "damaged" not in message
    disk.empty()
    status = disk.agrag("status", "--json", HASHED)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["documents"] == len(NOTES)


def test_r3_defect_5_an_ingestion_on_a_full_disk_is_refused_before_it_writes(
    disk: SmallDisk, prefect_harness: None, tmp_path: Path
) -> None:
    folder = notes(tmp_path)
    disk.ingest_here(folder)
    disk.fill(leave=MB)
    refused = disk.agrag("ingest", str(more_notes(folder)), HASHED)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    message = flat(refused.stderr)
    assert "Not enough free disk space to ingest" in message, message
    assert "it needs about 64 MB free" in message and "Nothing was changed" in message
    disk.empty()
    assert disk.documents() == len(NOTES)


def test_r3_defect_5_a_disk_that_fills_during_the_write_stage_stops_it_with_a_typed_error(
    disk: SmallDisk, prefect_harness: None, tmp_path: Path
) -> None:
    disk.ingest_here(notes(tmp_path))
    folder = str(more_notes(tmp_path / "notes"))
    # another program takes all but 1 MB right after the first commit batch
    filling = functools.partial(fill_after, "commit_documents:1", str(disk.filler), MB)
    batches = "ingest.write_batch_chunks=2"
    stopped = disk.agrag("ingest", folder, HASHED, batches, setup=filling)
    assert stopped.returncode == 1, stopped.stdout + stopped.stderr
    message = flat(stopped.stderr)
    assert "Not enough free disk space to write to the data dir" in message, message
    assert "everything committed before stays" in message
    disk.empty()
    again = disk.agrag("ingest", folder, HASHED, "ingest.write_batch_chunks=2")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 failed" in again.stdout
    assert disk.documents() == len(NOTES) + len(MORE_NOTES)


def test_r3_defect_5_repair_says_the_room_it_needs_and_refuses_without_it(
    disk: SmallDisk, prefect_harness: None, tmp_path: Path
) -> None:
    folder = Path(shutil.copytree(EXAMPLES, tmp_path / "notes"))  # enough points that a repair of all writes 1.5 MB
    disk.ingest_here(folder)
    with open_runtime([HASHED], isolated_settings(disk.data_dir)) as runtime:
        points = {c.value: runtime.store.vectors(c).count() for c in VectorCollection}
    shutil.rmtree(disk.data_dir / "vectors" / "chunks")  # the chunk vectors are lost
    disk.fill(leave=MB)
    refused = disk.agrag("repair", HASHED)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    message = flat(refused.stderr)
    # making the new chunk store (8 MB) and the floor of any write (AGRAG_MIN_FREE_MB, 64) on top of opening (512 KB)
    assert "Not enough free disk space to open the data dir for a repair: it needs about 72 MB free" in message
    assert "Nothing was changed" in message
    assert not (disk.data_dir / "vectors" / "chunks").exists()
    assert not list((disk.data_dir / "vectors").glob("*.damaged-*"))
    disk.empty()
    repaired = disk.agrag("repair", HASHED)
    assert repaired.returncode == 0, repaired.stderr
    said = flat(repaired.stdout)
    needs, chunks = size_text(64 * MB + points["chunks"] * BYTES_PER_POINT), points["chunks"]
    assert f"Repair: embed again {chunks} chunks vectors; this needs about {needs} free on the disk of" in said
    assert f"Repaired: embedded again {points['chunks']} chunks" in said
    # Room to open (512 KB) and for AGRAG_MIN_FREE_MB=16, not for what rebuilding every collection writes on top.
    room = sum(points.values()) * BYTES_PER_POINT
    assert room > 1536 * 1024, points
    disk.fill(leave=16 * MB + MB)
    refused = disk.agrag("repair", "--all", HASHED, AGRAG_MIN_FREE_MB="16")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    doing = ", ".join(f"{points[c]} {c} vectors" for c in sorted(points))
    said = flat(refused.stdout)
    assert f"Repair: embed again {doing}; this needs about {size_text(16 * MB + room)} free" in said, said
    message = flat(refused.stderr)
    assert f"Not enough free disk space to embed again {doing}: it needs about" in message, message
    assert "No vector was written, and the graph is unchanged" in message
    disk.empty()
    assert disk.documents() == len(list(EXAMPLES.iterdir()))  # every vector collection checked against the graph


def test_r3_defect_5_open_room_is_what_opening_a_shard_allocates_on_tmpfs(disk: SmallDisk, pristine: Path) -> None:
    disk.restore(pristine)
    for collection in VectorCollection:
        shard = disk.data_dir / "vectors" / collection.value
        said = QdrantEdgeVectorStore.open_room(shard)
        before = disk.free()
        store = QdrantEdgeVectorStore(shard, collection, 384)
        took = before - disk.free()
        assert said - MB // 4 <= took <= said + MB // 4, (collection, said, took)
        store.close()  # allocates what the next open would
        assert QdrantEdgeVectorStore.open_room(shard) == 0
        before = disk.free()
        QdrantEdgeVectorStore(shard, collection, 384).close()
        assert before - disk.free() <= MB // 4, collection


# A child opens the shard: the open must end in a typed error, where a crash would take pytest with it.
OPEN_SHARD = """
import sys
from pathlib import Path
from agrag.components.stores.json_ontology_store import JsonOntologyStore
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.vector_store import VectorCollection
try:
    QdrantEdgeVectorStore(Path(sys.argv[1]), VectorCollection.CHUNKS, 384).close()
    print("opened")
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def test_r3_defect_5_a_store_that_meets_a_full_disk_says_so_and_keeps_its_data(disk: SmallDisk, pristine: Path) -> None:
    disk.restore(pristine)
    shard = disk.data_dir / "vectors" / "chunks"
    QdrantEdgeVectorStore(shard, VectorCollection.CHUNKS, 384).close()  # opened once on this disk: nothing to back
    ontology = JsonOntologyStore(disk.data_dir / "ontology.json")
    ontology.write(OntologyAdditions(labels=(LabelSpec(label="Vendor"),)))
    kept = (disk.data_dir / "ontology.json").read_bytes()
    journal = SqlitePhaseJournal(disk.data_dir / "phases.sqlite")
    key = PhaseKey("test", "extract", "h")
    disk.fill(leave=0)
    opened = subprocess.run([sys.executable, "-c", OPEN_SHARD, str(shard)], capture_output=True, text=True, check=False)
    assert opened.returncode == 0, opened.stderr
    # Qdrant Edge rewrites its config file on open: ENOSPC there is a full disk, never damage to repair
    assert opened.stdout.startswith("NoSpaceLeftError The disk of"), opened.stdout
    assert "ran out of space while trying to open the vector store" in opened.stdout
    assert "damaged" not in opened.stdout and "repair" not in opened.stdout
    with pytest.raises(NoSpaceLeftError, match="ran out of space while trying to write the ontology additions"):
        ontology.write(OntologyAdditions(labels=(LabelSpec(label="Supplier"),)))
    assert (disk.data_dir / "ontology.json").read_bytes() == kept
    with pytest.raises(NoSpaceLeftError, match=r"ran out of space while trying to (open|write) the ingestion phase"):
        journal.save(key, os.urandom(4 * MB))
    journal.close()
    disk.empty()
    assert JsonOntologyStore(disk.data_dir / "ontology.json").read().labels[0].label == "Vendor"
    assert SqlitePhaseJournal(disk.data_dir / "phases.sqlite").load(key) is None
    assert disk.documents() == len(NOTES)


def test_r3_defect_5_http_and_mcp_reads_work_on_a_full_disk(
    disk: SmallDisk, prefect_harness: None, tmp_path: Path
) -> None:
    from prefect.settings import PREFECT_API_URL

    disk.ingest_here(notes(tmp_path))
    disk.fill(leave=MB)
    serve = Serve(  # serving no deployment: the session's Prefect server is other tests' too
        disk.data_dir,
        HASHED,
        "--deployment",
        "",
        env=disk.env(AGRAG_API_TOKENS=ADMIN, PREFECT_API_URL=str(PREFECT_API_URL.value())),
    )
    try:
        url = serve.started()
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60) as http:
            status = http.get("/v1/status")
            search = http.post("/v1/search", json={"query": QUESTION})
            documents = http.get("/v1/documents")

        async def mcp_reads() -> tuple[object, object]:
            async with client(f"{url}/mcp", ADMIN) as session:
                listed = await call(session, "list_documents")
                return listed, await call(session, "search_evidence", {"query": QUESTION})

        listed, found = asyncio.run(mcp_reads())
    finally:
        serve.stop()
    assert [status.status_code, search.status_code, documents.status_code] == [200, 200, 200]
    assert status.json()["documents"] == len(NOTES)
    assert any("Maria Chen" in json.dumps(hit) for hit in search.json()["hits"])
    assert len(documents.json()) == len(NOTES)
    assert "orion_planner.md" in json.dumps(listed) and "Orion Planner" in json.dumps(found)
    assert "Bus error" not in serve.stderr and "NoSpaceLeftError" not in serve.stderr, serve.stderr
