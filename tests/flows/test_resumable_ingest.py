"""Ingestion survives kill -9: a 200-note corpus, an LLM that counts requests, and a run killed mid-phase.

The killed run is a real ``agrag ingest`` process killed with SIGKILL; the run after it starts again in this
process. Its final store must equal a clean run's, and the scripted LLM must answer no request twice.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prefect.settings import PREFECT_API_URL

from agrag.flows.ingest_flow import ingest_flow
from agrag.flows.ingest_report import IngestReport
from tests.support import synthetic_corpus
from tests.support.scripted_llm import ScriptedLLM, scripted_llm

REPO = Path(__file__).resolve().parents[2]
AGRAG = str(Path(sys.executable).with_name("agrag"))
NOTES = 200
CONCURRENCY = 4
STEADY_SECONDS = 3.0  # held requests unchanged this long: no worker is about to send another
OVERRIDES = [
    # what is resumed is extraction and the writes; hashed vectors (no model) keep each run to its orchestration
    "embedder=hashed",
    "ingest/extractor=llm",
    "ingest/ontology=open",
    f"ingest.extractor.concurrency={CONCURRENCY}",
    "ingest.max_llm_calls=5000",
]


class Clean:
    """The report of a clean run and the requests it sent, in order."""

    def __init__(self, report: IngestReport, requests: list[str]) -> None:
        self.report = report
        self.requests = requests


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("notes")
    synthetic_corpus.write_corpus(folder, NOTES)
    return folder


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm(synthetic_corpus.answer) as server:
        yield server


@pytest.fixture(scope="module")
def clean(prefect_harness: None, corpus: Path, llm: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory) -> Clean:
    """One uninterrupted run: the counts and the requests every other run is held to."""
    before = len(llm.answered)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGRAG_LLM_BASE_URL", llm.base_url)
        report = ingest_flow(str(corpus), OVERRIDES, data_dir=str(tmp_path_factory.mktemp("clean")))
    return Clean(report, [_request_key(r) for r in llm.answered[before:]])


def _request_key(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], sort_keys=True)


def subprocess_env(llm: ScriptedLLM, data_dir: Path) -> dict[str, str]:
    """The environment of an ``agrag`` subprocess on ``data_dir`` with the scripted LLM and the test's Prefect."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_"))}
    return {
        **env,
        "AGRAG_DATA_DIR": str(data_dir),
        "AGRAG_LLM_BASE_URL": llm.base_url,
        "AGRAG_LLM_MAX_RETRIES": "0",
        "PREFECT_API_URL": str(PREFECT_API_URL.value()),
        "PYTHONPATH": str(REPO),
    }


def _resume(corpus: Path, llm: ScriptedLLM, data_dir: Path, extra: tuple[str, ...] = ()) -> IngestReport:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGRAG_LLM_BASE_URL", llm.base_url)
        return ingest_flow(str(corpus), [*OVERRIDES, *extra], data_dir=str(data_dir))


def _assert_asked_once(killed: list[str], resumed: list[str], clean: Clean) -> None:
    assert len(set(killed + resumed)) == len(killed) + len(resumed), "a request was answered twice"
    assert sorted(killed + resumed) == sorted(clean.requests), "together the two runs asked what a clean run asks"


def _assert_same_store(resumed: IngestReport, clean: Clean) -> None:
    assert resumed.counts == clean.report.counts, "the resumed store equals a clean run's, with no duplicates"
    assert resumed.counts["Document"] == NOTES
    assert resumed.counts["chunk_vectors"] == clean.report.chunks_by_kind.get("text", 0)


def test_a_kill_during_extraction_loses_no_answered_request(
    corpus: Path, llm: ScriptedLLM, clean: Clean, tmp_path: Path
) -> None:
    seed = random.randrange(10_000)
    kill_after = random.Random(seed).randrange(len(clean.requests) // 5, len(clean.requests) * 3 // 5)
    first, received_first = len(llm.answered), len(llm.requests)
    llm.release.clear()
    llm.hold_after_answers(kill_after)
    process = subprocess.Popen(
        [AGRAG, "ingest", str(corpus), *OVERRIDES],
        env=subprocess_env(llm, tmp_path / "data"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        # The kill lands mid-extraction, once every worker waits on a request, or once the held ones stop growing:
        # when the hold starts near the end of an extraction slice, fewer than CONCURRENCY requests are left in it,
        # and the next slice would only start after those time out (120 s) and are answered as failures.
        held, steady_since = 0, time.monotonic()
        while llm.held < CONCURRENCY and not (held and time.monotonic() - steady_since > STEADY_SECONDS):
            assert process.poll() is None, f"the ingest ended before the kill (seed {seed}): {process.stdout.read()}"
            assert time.monotonic() < deadline, f"no request was held (seed {seed})"
            if llm.held != held:
                held, steady_since = llm.held, time.monotonic()
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        llm.hold_after = None
        llm.release.set()
    killed = [_request_key(r) for r in llm.answered[first:]]
    received = [_request_key(r) for r in llm.requests[received_first:]]
    in_flight = set(received) - set(killed)
    assert len(in_flight) == llm.held and 1 <= llm.held <= CONCURRENCY, f"seed {seed}"
    assert process.returncode == -signal.SIGKILL and len(killed) == kill_after

    report = _resume(corpus, llm, tmp_path / "data")

    _assert_asked_once(killed, [_request_key(r) for r in llm.answered[first + len(killed) :]], clean)
    assert report.documents_resumed["chunk"] == NOTES
    assert 0 < report.documents_resumed["extract"] < NOTES, "documents extracted before the kill are not redone"
    received_again = [_request_key(r) for r in llm.requests[received_first + len(received) :]]
    assert set(received) & set(received_again) == in_flight, "only requests in flight at the kill are sent again"
    # at most CONCURRENCY + 1 documents were unfinished, each 2 chunks of at most 2 calls: their answers are cached
    assert report.llm_cache_hits <= 4 * (CONCURRENCY + 1)
    _assert_same_store(report, clean)


@pytest.mark.parametrize("step", ["random", "commit_documents"])
def test_a_kill_during_the_write_redoes_only_the_write(
    corpus: Path, llm: ScriptedLLM, clean: Clean, tmp_path: Path, step: str
) -> None:
    seed = random.randrange(10_000)
    if step == "random":  # a kill after one of the writes before the commit, with part of the batch stored
        writes = ["write_chunks", "upsert_entities", "upsert_mentions", "upsert_relations", "apply_resolution"]
        step = random.Random(seed).choice(writes)
    # one commit batch: the kill after commit_documents is after the last commit, before communities
    one_batch = "ingest.write_batch_chunks=100000"
    first = len(llm.answered)
    killed = subprocess.run(
        [sys.executable, "-m", "tests.support.die_during_write", step, "ingest", str(corpus), *OVERRIDES, one_batch],
        env=subprocess_env(llm, tmp_path / "data"),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, f"{step}: {killed.stdout}\n{killed.stderr}"
    before_kill = [_request_key(r) for r in llm.answered[first:]]

    report = _resume(corpus, llm, tmp_path / "data")

    _assert_asked_once(before_kill, [_request_key(r) for r in llm.answered[first + len(before_kill) :]], clean)
    sent_again = [r["messages"][0]["content"] for r in llm.answered[first + len(before_kill) :]]
    assert not any("knowledge graph from documents" in m for m in sent_again), f"re-extracted after {step}"
    if step == "commit_documents":  # committed, but its communities were not refreshed yet: this run does it
        assert report.documents_ingested == 0 and "reports" in report.stage_seconds
    else:
        assert report.documents_ingested == NOTES
        assert report.documents_resumed == {"chunk": NOTES, "extract": NOTES, "resolve": NOTES, "embed": NOTES}
    _assert_same_store(report, clean)
    again = _resume(corpus, llm, tmp_path / "data")
    assert again.documents_ingested == 0 and "reports" not in again.stage_seconds, "nothing is left to do"


def test_a_kill_between_commit_batches_resumes_with_the_batches_left(
    corpus: Path, llm: ScriptedLLM, clean: Clean, tmp_path: Path
) -> None:
    """Killed after the third of many commit batches: those documents are committed, the rest are written later.

    The run started again resolves nothing anew (the rest is written with the resolution the killed run journaled
    for the whole batch, so decisions made across the cut stand) and ends with the clean run's store.
    """
    batches = ("ingest.write_batch_chunks=40",)
    first = len(llm.answered)
    killed = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.support.die_during_write",
            "commit_documents:3",
            "ingest",
            str(corpus),
            *OVERRIDES,
            *batches,
        ],
        env=subprocess_env(llm, tmp_path / "data"),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, f"{killed.stdout}\n{killed.stderr}"
    before_kill = [_request_key(r) for r in llm.answered[first:]]

    report = _resume(corpus, llm, tmp_path / "data", batches)

    _assert_asked_once(before_kill, [_request_key(r) for r in llm.answered[first + len(before_kill) :]], clean)
    left = report.documents_ingested
    assert 0 < left < NOTES - 3, "three batches of whole documents were committed before the kill"
    assert report.documents_resumed == {"chunk": left, "extract": left, "resolve": left, "embed": left}
    _assert_same_store(report, clean)
    again = _resume(corpus, llm, tmp_path / "data", batches)
    assert again.documents_ingested == 0 and "reports" not in again.stage_seconds, "nothing is left to do"
