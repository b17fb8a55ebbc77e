"""POST /v1/reextractions and POST /v1/finalize on a real server with the real queue: queued, followed, reported."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.document import document_id_for
from agrag.pipelines.runtime import Runtime, serving
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from agrag.service.server.ingestion_queue import IngestionQueue
from tests.service.api.conftest import ADMIN, OWNER, SCOPE, TEAM, Served
from tests.service.api.test_http_ingestion import finished
from tests.support.served_api import uvicorn_in_thread

TEAM_DOCUMENT = document_id_for("team.md", "acme_notes")
NOTE = "# Kestrel Pump\n\nThe Kestrel Pump Station was commissioned by Ilse Varga in 2021 for Harbour Works.\n"


@pytest.fixture(scope="module")
def queued(served_runtime: Runtime) -> Iterator[Served]:
    """The API with a running ingestion queue, an admin token and a token limited to two documents."""
    queue = IngestionQueue(served_runtime, served_runtime.runs)
    queue.start()
    access = AccessPolicy([ApiToken("admin", ADMIN), ApiToken("team", TEAM, SCOPE)], OWNER)
    try:
        with serving(served_runtime), uvicorn_in_thread(create_app(served_runtime, access, queue=queue)) as url:
            yield Served(url, served_runtime)
    finally:
        queue.shutdown(30)


def test_a_forced_reextraction_is_queued_followed_and_reports_each_document(queued: Served) -> None:
    with queued.client() as client:
        before = client.get("/v1/status").json()
        started = client.post("/v1/reextractions", json={"document_ids": [TEAM_DOCUMENT], "force": True})
        assert started.status_code == 202, started.text
        run = finished(client, started.json()["id"])
        again = client.post("/v1/reextractions", json={"document_ids": [TEAM_DOCUMENT]})
        unchanged = finished(client, again.json()["id"])
        after = client.get("/v1/status").json()
    assert started.json()["kind"] == "reextract" and started.json()["target"] == TEAM_DOCUMENT
    assert run["state"] == "completed", run["message"]
    assert run["message"] == "Re-extraction: 1 reextracted, 0 unchanged, 0 failed."
    [outcome] = run["report"]["documents"]
    assert outcome["document_id"] == TEAM_DOCUMENT and outcome["status"] == "reextracted" and outcome["chunks"] > 0
    assert [d["status"] for d in unchanged["report"]["documents"]] == ["unchanged"]  # same settings, no --force
    assert after["chunks"] == before["chunks"] and after["documents"] == before["documents"]  # chunks untouched


def test_a_reextraction_is_refused_before_it_is_queued(queued: Served) -> None:
    with queued.client() as client:
        runs_before = len(client.get("/v1/ingestions").json())
        unknown = client.post("/v1/reextractions", json={"document_ids": ["dnothing"]})
        nothing = client.post("/v1/reextractions", json={})
        both = client.post("/v1/reextractions", json={"document_ids": [TEAM_DOCUMENT], "other_settings": True})
        runs_after = len(client.get("/v1/ingestions").json())
    with queued.client(TEAM) as scoped:
        forbidden = scoped.post("/v1/reextractions", json={"document_ids": [TEAM_DOCUMENT]})
    assert unknown.status_code == 404 and "dnothing" in unknown.json()["message"], unknown.text
    assert nothing.status_code == 400 and "no document was named" in nothing.json()["message"], nothing.text
    assert both.status_code == 400 and "both document ids and --other-settings" in both.json()["message"]
    assert forbidden.status_code == 403 and "limited to some documents" in forbidden.json()["message"]
    assert runs_after == runs_before


def test_finalize_rebuilds_what_a_manual_ingestion_deferred(queued: Served, tmp_path: Path) -> None:
    folder = tmp_path / "pump"
    folder.mkdir()
    (folder / "kestrel.md").write_text(NOTE, encoding="utf-8")
    with queued.client() as client:
        ingested = client.post("/v1/ingestions", json={"folder": str(folder), "overrides": ["ingest.finalize=manual"]})
        ingestion = finished(client, ingested.json()["id"])
        started = client.post("/v1/finalize")
        assert started.status_code == 202, started.text
        run = finished(client, started.json()["id"])
        again = finished(client, client.post("/v1/finalize", json={}).json()["id"])
        bad = client.post("/v1/finalize", json={"overrides": ["ingest.communities.nope=1"]})
        listed = client.get("/v1/ingestions", params={"limit": 3}).json()
    with queued.client(TEAM) as scoped:
        forbidden = scoped.post("/v1/finalize")
    assert ingestion["state"] == "completed" and ingestion["report"]["communities_deferred"] is True
    assert started.json()["kind"] == "finalize" and started.json()["target"] == "communities and reports"
    assert run["state"] == "completed", run["message"]
    assert run["message"].startswith("finalized: communities rebuilt around ")
    assert [s["name"] for s in run["stages"]] == ["communities", "reports"]
    assert run["report"]["finalized"] is True and run["report"]["communities_by_level"]
    assert again["state"] == "completed" and again["message"] == (
        "nothing to finalize: the communities and reports are up to date"
    )
    assert bad.status_code == 400 and "nope" in bad.json()["message"], bad.text
    assert forbidden.status_code == 403
    assert [r["id"] for r in listed[:2]] == [again["id"], run["id"]]
