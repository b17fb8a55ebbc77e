"""The admin routes over HTTP with the real ingestion queue: start, queue, follow, cancel, delete, see it in status."""

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agrag.components.data_models.document import document_id_for
from agrag.pipelines.runtime import Runtime, serving
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from agrag.service.server.ingestion_queue import IngestionQueue
from tests.service.api.conftest import ADMIN, OWNER, Served
from tests.support.served_api import uvicorn_in_thread

NOTES = {
    "pump_station.md": "# Pump Station\n\nThe Kestrel Pump Station was commissioned by Ilse Varga in 2021.\n",
    "ferry.md": "# Ferry Line\n\nThe Osprey ferry line links the two harbours; Tomasz Wren runs its timetable.\n",
}


@pytest.fixture(scope="module")
def queued(served_runtime: Runtime) -> Iterator[Served]:
    """The API with a running ingestion queue (its flows run under the test session's Prefect harness)."""
    queue = IngestionQueue(served_runtime, served_runtime.runs)
    queue.start()
    access = AccessPolicy([ApiToken("admin", ADMIN)], OWNER)
    try:
        # as `agrag serve` does: the flows the queue runs write through this runtime
        with serving(served_runtime), uvicorn_in_thread(create_app(served_runtime, access, queue=queue)) as url:
            yield Served(url, served_runtime)
    finally:
        queue.shutdown(30)


def notes(folder: Path) -> Path:
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text)
    return folder


def finished(client: httpx.Client, run_id: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        run: dict[str, Any] = client.get(f"/v1/ingestions/{run_id}").json()
        if run["state"] not in ("queued", "running"):
            return run
        if time.monotonic() > deadline:
            pytest.fail(f"run {run_id} still {run['state']} after {timeout} s")
        time.sleep(0.2)


def test_an_ingestion_over_http_is_queued_followed_and_then_found(queued: Served, tmp_path: Path) -> None:
    folder = notes(tmp_path / "notes")
    with queued.client() as client:
        before = client.get("/v1/status").json()
        started = client.post("/v1/ingestions", json={"folder": str(folder)})
        assert started.status_code == 202, started.text
        second = client.post("/v1/ingestions", json={"folder": str(folder), "overrides": []}).json()
        run = finished(client, started.json()["id"])
        again = finished(client, second["id"])
        listed = client.get("/v1/ingestions", params={"limit": 5}).json()
        after = client.get("/v1/status").json()
        hits = client.post("/v1/search", json={"query": "Who commissioned the Kestrel Pump Station?"}).json()["hits"]
    assert started.json()["source"] == "http" and started.json()["kind"] == "ingest"
    assert "Queued behind" in second["message"] and started.json()["id"] in second["queued_behind"]
    assert run["state"] == "completed", run["message"]
    assert {stage["name"] for stage in run["stages"]} >= {"load", "chunk", "write"}
    assert again["state"] == "completed"  # the same folder again: unchanged, nothing to do
    assert [r["id"] for r in listed[:2]] == [second["id"], run["id"]]
    assert after["documents"] == before["documents"] + len(NOTES)
    assert after["last_ingestion"]["id"] == second["id"] and after["generation"] != before["generation"]
    assert any(h["kind"] == "chunk" and "Ilse Varga" in h["item"]["text"] for h in hits)


def test_a_queued_run_can_be_cancelled(queued: Served, tmp_path: Path) -> None:
    folder = notes(tmp_path / "more")
    (folder / "extra.md").write_text("# Extra\n\nA third note about the Heron lighthouse keeper Ada Flint.\n")
    with queued.client() as client:
        first = client.post("/v1/ingestions", json={"folder": str(folder)}).json()
        second = client.post("/v1/ingestions", json={"folder": str(folder)}).json()
        cancelled = client.post(f"/v1/ingestions/{second['id']}/cancel").json()
        finished(client, first["id"])
        assert client.get(f"/v1/ingestions/{second['id']}").json()["state"] == "cancelled"
    assert cancelled["state"] == "cancelled" and "nothing was written" in cancelled["message"]


def test_a_document_deleted_over_http_leaves_search(queued: Served) -> None:
    document = document_id_for("vendors.html", "acme_notes")
    with queued.client() as client:
        before = client.post("/v1/search", json={"query": "vendors", "recipe": "chunk"}).json()["hits"]
        assert any(h["item"]["document_id"] == document for h in before)
        started = client.post(f"/v1/documents/{document}/delete", json={})
        assert started.status_code == 202 and started.json()["kind"] == "delete"
        run = finished(client, started.json()["id"])
        after = client.post("/v1/search", json={"query": "vendors", "recipe": "chunk"}).json()["hits"]
    assert run["state"] == "completed", run["message"]
    assert not any(h["item"]["document_id"] == document for h in after)


def test_bad_ingestion_requests_are_refused_before_anything_is_queued(queued: Served, tmp_path: Path) -> None:
    with queued.client() as client:
        count = len(client.get("/v1/ingestions", params={"limit": 500}).json())
        missing = client.post("/v1/ingestions", json={"folder": str(tmp_path / "nope")})
        override = client.post("/v1/ingestions", json={"folder": str(tmp_path), "overrides": ["ingest.chunker.max=1"]})
        store = client.post("/v1/ingestions", json={"folder": str(tmp_path), "overrides": ["vector_store=qdrant"]})
        unknown_run = client.get("/v1/ingestions/run-that-never-was")
        unknown_document = client.post("/v1/documents/dnothing/delete", json={})
        assert len(client.get("/v1/ingestions", params={"limit": 500}).json()) == count
    assert missing.status_code == 400 and missing.json()["error"] == "IngestError"
    assert override.status_code == 400 and "ingest.chunker.max" in override.json()["message"]
    assert store.status_code == 400 and "vector_store" in store.json()["message"]
    assert unknown_run.status_code == 404 and unknown_run.json()["error"] == "RunNotFoundError"
    assert unknown_document.status_code == 404 and unknown_document.json()["error"] == "DocumentNotFoundError"


def test_a_server_other_machines_reach_ingests_only_below_the_files_root(
    served_runtime: Runtime, tmp_path: Path
) -> None:
    queue = IngestionQueue(served_runtime, served_runtime.runs)
    access = AccessPolicy([ApiToken("admin", ADMIN)], OWNER)
    app = create_app(served_runtime, access, queue=queue, remote=True, warm_up=False)
    with (
        uvicorn_in_thread(app) as url,
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}) as http,
    ):
        refused = http.post("/v1/ingestions", json={"folder": str(notes(tmp_path / "notes"))})
        assert not queue.pending(), "nothing was queued"
    assert refused.status_code == 400 and refused.json()["error"] == "IngestError"
    assert "AGRAG_FILES_ROOT" in refused.json()["message"] and "queued" not in refused.json()["message"]


def test_an_ingestion_of_chosen_files_reads_only_them_under_their_whole_folder_ids(
    queued: Served, tmp_path: Path
) -> None:
    folder = notes(tmp_path / "chosen")
    (folder / "sub").mkdir()
    (folder / "sub" / "depot.md").write_text("# Depot\n\nThe Heron depot stores spare pumps for Ilse Varga.\n")
    with queued.client() as client:
        started = client.post("/v1/ingestions", json={"folder": str(folder), "files": ["sub/*.md", "ferry.md"]})
        assert started.status_code == 202, started.text
        run = finished(client, started.json()["id"])
        outside = client.post("/v1/ingestions", json={"folder": str(folder), "files": ["../elsewhere.md"]})
        nothing = client.post("/v1/ingestions", json={"folder": str(folder), "files": ["*.pdf"]})
        documents = {d["id"] for d in client.get("/v1/documents", params={"limit": 500}).json()}
    assert run["state"] == "completed", run["message"]
    assert sorted(f["source_path"] for f in run["report"]["files"]) == ["ferry.md", "sub/depot.md"]
    assert {document_id_for("ferry.md", "chosen"), document_id_for("sub/depot.md", "chosen")} <= documents
    assert document_id_for("pump_station.md", "chosen") not in documents
    assert outside.status_code == 400 and "'..'" in outside.json()["message"]
    assert nothing.status_code == 400 and nothing.json()["error"] == "NoFilesMatchedError"
