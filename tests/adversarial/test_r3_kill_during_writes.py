"""Kill -9 during the writes of the CLI path: no reader ever sees a version that is not committed (issue 43).

Defect 4: `agrag ingest` (in-process, no server) killed 0.4 s into its write stage with `ingest.write_batch_chunks=2`
left a document with no version and 3 chunks marked current, which search, discover and fetch returned and `agrag
status` did not count. Here real `agrag` commands (forked from a warm process, see `tests/support/kill_points.py`)
kill themselves on both sides of the commit of every commit batch of an ingestion of new and changed files (after
the writes that come before the commit statement; and right after it, before the batch's vectors are made visible),
and before and after the commit of `agrag delete` and inside and after that of `agrag reextract`. After each kill
the data dir is opened as the next command opens it and read every way (`tests/support/committed_reads.py`): 4
recipes x 2 queries, discover in every mode, find_entities, explore, fetch of every id of every version, navigate,
the documents listing and the status counts. The commands run again give the store an uninterrupted run gives.

Defect 9: a run killed inside a stage kept that stage `running` in the run registry after the next command opened
the data dir; it is `interrupted` now, like the run.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
from prefect.settings import PREFECT_API_URL

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.data_models.ingestion_run import RunState, StageState
from agrag.flows.delete_flow import delete_from
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.reextract_flow import reextract_into
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings
from tests.support.committed_reads import CommittedReads, Versions
from tests.support.data_dir_copy import copy_data_dir
from tests.support.kill_points import KillPoint, run_agrag
from tests.support.store_dump import dump

pytestmark = pytest.mark.slow

HASHED = ["embedder=hashed"]
BATCHES = [*HASHED, "ingest.write_batch_chunks=2"]
QUERIES = ("Maria Chen", "Orion Planner pumping station")
# Inside a commit, after the graph writes that come before its commit statement (the documents' older chunks retired).
INSIDE_BATCH = KillPoint("agrag.components.stores.knowledge_store:KnowledgeStore.retire_chunks")
INSIDE_DELETE = INSIDE_BATCH
INSIDE_REEXTRACT = KillPoint("agrag.components.stores.kuzu_graph_store:KuzuGraphStore.unlink_chunks")
# The graph has committed (its commit statement ran); the vector points it wrote or changed are not visible yet.
AFTER_GRAPH_COMMIT = KillPoint("agrag.components.stores.pending_vectors:PendingVectors.apply", before=True)
AFTER_DELETE_COMMIT = KillPoint("agrag.components.stores.kuzu_graph_store:KuzuGraphStore.delete_document")
REEXTRACT = "ingest.extractor.min_name_length=6"  # drops short names: the links of a re-extracted document change

NOTE = "# {title}\n\n## History\n\n{history}\n\n## Operations\n\n{operations}\n"
V1 = {
    "alpha.md": (
        "Alpha Pumping Station",
        "Maria Chen built the Alpha station in Bergen with Zephyr Valves.",
        "Tomas Eriksen runs the Alpha station at night with the Kestrel Sensor.",
    ),
    "beta.md": (
        "Beta Pumping Station",
        "Priya Nair built the Beta station in Riga.",
        "Maria Chen checks the Kestrel Sensor of the Beta station every week.",
    ),
    "gamma.md": (
        "Gamma Pumping Station",
        "Daniel Okafor built the Gamma station in Graz.",
        "Ines Duarte runs the Gamma station with the Atlas Controller.",
    ),
}
# alpha changes (Zephyr Valves leaves the graph), delta is new, beta and gamma stay: two commit batches, so the kill
# matrix below covers each boundary of a run that replaces one document and adds another (four kills, not six).
V2 = {
    "alpha.md": (
        "Alpha Pumping Station",
        "Maria Chen rebuilt the Alpha station in Bergen for the Orion Planner.",
        "Tomas Eriksen runs the Alpha station at night with the Orion Planner.",
    ),
    "delta.md": (
        "Delta Pumping Station",
        "Daniel Okafor built the Delta station in Split.",
        "Priya Nair tunes the Orion Planner of the Delta station.",
    ),
}


def _write(folder: Path, notes: dict[str, tuple[str, str, str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, (title, history, operations) in notes.items():
        (folder / name).write_text(NOTE.format(title=title, history=history, operations=operations))


def _settings(data_dir: Path) -> Settings:
    return Settings(AgragSettings(data_dir=data_dir, _env_file=None), RetrievalSettings(_env_file=None))  # type: ignore[call-arg]


def _open(data_dir: Path) -> Any:
    return open_runtime(HASHED, _settings(data_dir), require_data=False)


def _ingest(folder: Path, data_dir: Path, *overrides: str) -> None:
    with _open(data_dir) as runtime:
        ingest_into(str(folder), runtime.config_for([*BATCHES, *overrides]), runtime.store, runtime.embedder)


def _every_id(runtime: Runtime) -> list[str]:
    graph = runtime.store.graph
    chunks = [c for d in graph.documents(limit=1000) for c in graph.get_chunks(graph.document_chunk_ids(d.id))]
    return [str(EvidenceId.of_chunk(c)) for c in chunks if isinstance(c, Chunk)]


def _kill(argv: list[str], data_dir: Path, kill: KillPoint, log: Path) -> None:
    code = run_agrag(argv, data_dir=data_dir, log=log, prefect_api_url=str(PREFECT_API_URL.value()), kill=kill)
    assert code == -signal.SIGKILL, f"`agrag {' '.join(argv)}` was to die at {kill}, ended {code}:\n{log.read_text()}"


def _read(data_dir: Path, versions: Versions) -> dict[str, str]:
    """Open the data dir as the next command does, read it every way; return its documents listing (id -> version)."""
    with _open(data_dir) as runtime:
        reads = CommittedReads(runtime, versions, QUERIES)
        assert reads.run() > 0
        return reads.current


def _graph_and_vectors(store_dump: dict[str, Any]) -> dict[str, Any]:
    """A dump without the communities, which a killed delete or re-extraction leaves for the next run to refresh."""
    counts = {
        k: v for k, v in store_dump["counts"].items() if k not in ("Community", "IN_COMMUNITY", "community_vectors")
    }
    return {**{k: v for k, v in store_dump.items() if k not in ("communities", "counts")}, "counts": counts}


def _versions(data_dir: Path) -> dict[str, str]:
    with _open(data_dir) as runtime:
        return {d.id: d.version for d in runtime.store.graph.documents(limit=1000)}


def _dump(data_dir: Path) -> dict[str, Any]:
    with _open(data_dir) as runtime:
        return dump(runtime.store)


def test_r3_defect_4_a_killed_cli_ingest_shows_no_uncommitted_chunk_at_any_batch_boundary(
    prefect_harness: None, tmp_path: Path
) -> None:
    folder, clean, killed = tmp_path / "notes", tmp_path / "clean", tmp_path / "killed"
    _write(folder, V1)
    _ingest(folder, clean)
    copy_data_dir(clean, killed)
    with _open(clean) as runtime:
        versions = Versions(_every_id(runtime))
        first = {d.id: d.version for d in runtime.store.graph.documents(limit=1000)}
    _write(folder, V2)
    _ingest(folder, clean)
    with _open(clean) as runtime:
        versions.every_id = sorted({*versions.every_id, *_every_id(runtime)})
        final = {d.id: d.version for d in runtime.store.graph.documents(limit=1000)}
        expected = dump(runtime.store)
    changed = sorted(d for d, v in final.items() if first.get(d) != v)
    assert len(changed) == 2, "alpha changed and delta is new: two commit batches of two chunks or more"
    versions.committed |= set(first.items())

    argv = ["ingest", str(folder), *BATCHES]
    for batch in range(1, len(changed) + 1):
        for point, committed in ((INSIDE_BATCH, batch - 1), (AFTER_GRAPH_COMMIT, batch)):
            _kill(argv, killed, point, tmp_path / f"batch{batch}-{point.target.rsplit('.', 1)[1]}.log")
            listed = _read(killed, versions)
            at_new = sorted(d for d in changed if listed.get(d) == final[d])
            assert len(at_new) == committed, f"batch {batch}, killed at {point}: {at_new} committed"
            assert all(listed.get(d) in (first.get(d), final[d]) for d in final), listed

    _ingest(folder, killed)
    assert _dump(killed) == expected, "the run after the kills ends with the store of an uninterrupted run"


def test_r3_defect_4_a_killed_delete_or_reextraction_shows_no_uncommitted_chunk_and_resumes(
    prefect_harness: None, tmp_path: Path
) -> None:
    folder, data_dir, reference = tmp_path / "notes", tmp_path / "data", tmp_path / "reference"
    _write(folder, V1)
    _ingest(folder, data_dir)
    copy_data_dir(data_dir, reference)
    with _open(reference) as runtime:
        versions = Versions(_every_id(runtime))
        beta = next(d.id for d in runtime.store.graph.documents(limit=1000) if d.source_path.endswith("beta.md"))
        alpha = next(d.id for d in runtime.store.graph.documents(limit=1000) if d.source_path.endswith("alpha.md"))
        delete_from(beta, runtime.config, runtime.store, runtime.embedder)
        deleted = dump(runtime.store)
        reextract_into([alpha], runtime.config_for([*HASHED, REEXTRACT]), runtime.store, runtime.embedder)
        reextracted = dump(runtime.store)
    before_alpha = _versions(data_dir)[alpha]

    _kill(["delete", beta, *HASHED], data_dir, INSIDE_DELETE, tmp_path / "delete-inside.log")
    assert _read(data_dir, versions).get(beta), "killed before its commit, the delete left the document current"
    _kill(["delete", beta, *HASHED], data_dir, AFTER_DELETE_COMMIT, tmp_path / "delete-after.log")
    assert beta not in _read(data_dir, versions), "killed after its commit, the document is deleted"
    assert _graph_and_vectors(_dump(data_dir)) == _graph_and_vectors(deleted)

    reextract = ["reextract", alpha, *HASHED, REEXTRACT]
    _kill(reextract, data_dir, INSIDE_REEXTRACT, tmp_path / "reextract-inside.log")
    # its chunks and version stay committed; the links of a re-extraction killed half-way are half replaced
    assert _read(data_dir, versions).get(alpha) == before_alpha
    _kill(reextract, data_dir, AFTER_GRAPH_COMMIT, tmp_path / "reextract-after.log")
    _read(data_dir, versions)
    assert _graph_and_vectors(_dump(data_dir)) == _graph_and_vectors(reextracted)

    with _open(data_dir) as runtime:  # run again: nothing is left to re-extract, the stale communities are refreshed
        reextract_into([alpha], runtime.config_for([*HASHED, REEXTRACT]), runtime.store, runtime.embedder)
        assert dump(runtime.store) == reextracted


def test_r3_defect_9_a_killed_run_and_its_stage_are_interrupted_after_the_next_open(
    prefect_harness: None, tmp_path: Path
) -> None:
    folder, data_dir = tmp_path / "notes", tmp_path / "data"
    _write(folder, {"alpha.md": V1["alpha.md"]})
    _kill(["ingest", str(folder), *BATCHES], data_dir, INSIDE_BATCH, tmp_path / "killed.log")
    with _open(data_dir) as runtime:
        (run,) = runtime.runs.recent()
    assert run.state == RunState.INTERRUPTED
    stages = {s.name: s.state.value for s in run.stages}
    assert stages["write"] == "interrupted", stages  # the stage the kill landed in
    assert StageState.RUNNING.value not in stages.values(), stages
