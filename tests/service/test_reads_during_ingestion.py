"""Acceptance: `agrag serve` keeps answering while documents arrive, and never shows what is not committed.

One served process (a subprocess, as a user runs it) over a copy of the example corpus. 30 more notes arrive twice:
through the HTTP API, then as a run of the agrag-ingest deployment started through the Prefect API. During each, 4
client threads search (HYBRID) and discover without pause. Every chunk a client receives must belong to a committed
document version: the documents listing read after the answer (a document gets its version when its batch commits,
and a reader never sees a batch before its commit) must hold that version. Right after each run, its notes are found.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from prefect.deployments import run_deployment
from prefect.settings import PREFECT_API_URL

from tests.service.conftest import copy_corpus
from tests.service.server.test_serve_command import Serve, serve_env

pytestmark = pytest.mark.slow

DEPLOYMENT_NAME = "reads-during-ingestion"
CLIENTS = 4
NOTES = 30
# Small commit batches, so each run commits many times while the clients read.
OVERRIDES = ["ingest.write_batch_chunks=6"]
PLACES = "Tromsø Bergen Aarhus Tallinn Riga Vilnius Gdańsk Kraków Brno Graz Ljubljana Split".split()
NOTE = (
    "# {name} Pumping Station\n\n"
    "The {name} pumping station in {place} was commissioned by {engineer} in {year}.\n\n"
    "## Operations\n\n"
    "{engineer} hands the night shift of {name} to {operator}, who logs the pressure every hour.\n"
)


def write_notes(folder: Path, prefix: str) -> dict[str, str]:
    """30 notes, each naming a station nobody else names; returns station name -> note file name."""
    folder.mkdir(parents=True)
    stations = {}
    for i in range(NOTES):
        name = f"{prefix}{i:02d}"
        text = NOTE.format(
            name=name,
            place=PLACES[i % len(PLACES)],
            engineer=f"Engineer {prefix} {i}",
            operator=f"Operator {prefix} {i}",
            year=1990 + i,
        )
        (folder / f"{name.lower()}.md").write_text(text)
        stations[name] = f"{name.lower()}.md"
    return stations


@dataclass
class Readers:
    """Client threads that search and discover until stopped, checking each answer against the committed versions."""

    url: str
    token: str
    queries: list[str]
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: list[float] = field(default_factory=list)  # when each answer arrived (seconds since the epoch)
    failures: list[str] = field(default_factory=list)
    uncommitted: list[str] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> None:
        self.threads = [threading.Thread(target=self._loop, args=(i,)) for i in range(CLIENTS)]
        for thread in self.threads:
            thread.start()

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=120)

    def _loop(self, index: int) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        with httpx.Client(base_url=self.url, headers=headers, timeout=60) as http:
            session = http.post("/v1/sessions", json={}).json()["id"]
            i = index
            while not self.stop.is_set():
                query = self.queries[i % len(self.queries)]
                i += 1
                try:
                    searched = self._ok(http.post("/v1/search", json={"query": query, "recipe": "hybrid"}))
                    discovered = self._ok(http.post(f"/v1/sessions/{session}/discover", json={"query": query}))
                    committed = {d["id"]: d["version"] for d in self._ok(http.get("/v1/documents?limit=1000"))}
                except (httpx.HTTPError, AssertionError) as exc:
                    with self.lock:
                        self.failures.append(f"{query}: {exc}")
                    continue
                seen = _chunk_versions(searched) | _evidence_versions(discovered)
                with self.lock:
                    self.calls.append(time.time())
                    self.uncommitted += [f"{d}.{v}" for d, v in seen if committed.get(d) != v]

    @staticmethod
    def _ok(response: httpx.Response) -> Any:
        assert response.status_code == 200, f"HTTP {response.status_code}: {response.text[:300]}"
        return response.json()


def _chunk_versions(searched: dict[str, Any]) -> set[tuple[str, str]]:
    chunks = [h["item"] for h in searched["hits"] if h["kind"] == "chunk"]
    chunks += [h["parent"] for h in searched["hits"] if h.get("parent")]
    return {(c["document_id"], c["document_version"]) for c in chunks}


def _evidence_versions(discovered: dict[str, Any]) -> set[tuple[str, str]]:
    return {tuple(h["id"].split(".")[:2]) for h in discovered["hits"]}  # type: ignore[misc]


@dataclass
class Served:
    """The `agrag serve` subprocess, its data dir and its owner token (from the server file)."""

    serve: Serve
    data_dir: Path

    @property
    def token(self) -> str:
        return str(json.loads((self.data_dir / ".agrag.server.json").read_text())["token"])


@pytest.fixture(scope="module")
def served(prefect_harness: None, ingested_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("reads")
    data_dir = copy_corpus(ingested_corpus, root)
    env = serve_env(data_dir, PREFECT_API_URL=str(PREFECT_API_URL.value()), PREFECT_HOME=str(root / "prefect"))
    serve = Serve(data_dir, "--deployment", DEPLOYMENT_NAME, env=env)
    serve.started()
    try:
        yield Served(serve, data_dir)
    finally:
        serve.stop(signal.SIGTERM)


def ingest_while_reading(served: Served, start_run: Any, stations: dict[str, str]) -> None:
    """Start a run with ``start_run(http)`` -> run id, read during it from 4 clients, then check the acceptance."""
    queries = [f"Who commissioned the {name} pumping station?" for name in stations] + [
        "Who wrote the Orion Planner?",
        "What caused the replanning storm in Lyon?",
    ]
    readers = Readers(served.serve.url, served.token, queries)
    headers = {"Authorization": f"Bearer {served.token}"}
    with httpx.Client(base_url=served.serve.url, headers=headers, timeout=60) as http:
        readers.start()
        try:
            run_id = start_run(http)
            run = _finished(http, run_id)
        finally:
            readers.finish()
        assert run["state"] == "completed", run
        started, finished = (datetime.fromisoformat(run[k]).timestamp() for k in ("started", "finished"))
        during = [t for t in readers.calls if started <= t <= finished]
        assert readers.failures == [], readers.failures[:5]
        assert readers.uncommitted == [], f"results from uncommitted versions: {readers.uncommitted[:5]}"
        assert len(during) >= 10, f"only {len(during)} answers arrived while the run was writing"
        # the new notes are found right after the run commits: the first search after it names each station
        for name in list(stations)[:5]:
            hits = http.post("/v1/search", json={"query": f"{name} pumping station", "recipe": "chunk"}).json()
            assert any(name in h["item"]["text"] for h in hits["hits"] if h["kind"] == "chunk"), name


def _finished(http: httpx.Client, run_id: str, timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        response = http.get(f"/v1/ingestions/{run_id}")
        if response.status_code == 200 and response.json()["state"] not in ("queued", "running"):
            return dict(response.json())
        assert time.monotonic() < deadline, f"run {run_id} did not finish: {response.text[:300]}"
        time.sleep(0.2)


def test_searches_keep_answering_during_an_ingestion_started_over_http(served: Served, tmp_path: Path) -> None:
    stations = write_notes(tmp_path / "http-notes", "Hx")

    def start(http: httpx.Client) -> str:
        response = http.post("/v1/ingestions", json={"folder": str(tmp_path / "http-notes"), "overrides": OVERRIDES})
        assert response.status_code == 202, response.text
        return str(response.json()["id"])

    ingest_while_reading(served, start, stations)


def test_searches_keep_answering_during_a_run_started_through_the_prefect_api(served: Served, tmp_path: Path) -> None:
    stations = write_notes(tmp_path / "prefect-notes", "Px")

    def start(http: httpx.Client) -> str:
        flow_run = run_deployment(
            name=f"agrag-ingest/{DEPLOYMENT_NAME}",
            parameters={"folder": str(tmp_path / "prefect-notes"), "overrides": OVERRIDES},
            timeout=0,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the server claims it within a poll
            runs = http.get("/v1/ingestions").json()
            if any(r["id"] == str(flow_run.id) for r in runs):  # type: ignore[union-attr]
                return str(flow_run.id)  # type: ignore[union-attr]
            time.sleep(0.2)
        pytest.fail("agrag serve did not pick up the deployment run")

    ingest_while_reading(served, start, stations)
