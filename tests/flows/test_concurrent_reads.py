"""Searches and evidence calls go on while an ingestion writes, in one process, and see only committed documents.

Real Kùzu and Qdrant Edge stores in a temporary data dir hold the example corpus; four reader threads then search
(HYBRID) and discover in a loop, each call inside ``store.reading()``, while ``ingest_into`` adds 30 notes in commit
batches of a few chunks. The store's lock is a ``ReadWriteLock`` that also records, at each commit batch, how many
readers waited through the one before and whether they got in before it: facts about order, never about time.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import IngestInterruptedError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.read_write_lock import ReadWriteLock
from agrag.flows.ingest_control import IngestControl, StageState
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.ingest_report import IngestReport, stage_lines
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.evidence_session import EvidenceSession
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import AgragSettings, RetrievalSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES
from tests.support import synthetic_corpus
from tests.support.store_dump import dump

NOTES = 30
READERS = 4
BATCH = ["ingest.write_batch_chunks=8"]  # about 100 chunks of new notes: a dozen commit batches
HYBRID = load_recipe("hybrid")
QUERIES = ("Who owns the Aurora Service?", "Orion Planner replanning", "Ada Varga", "where does Cobalt Service run")


class CountingLock(ReadWriteLock):
    """A ``ReadWriteLock`` that checks, at each write section, that the readers who waited got in before it.

    When a section ends it notes how many readers wait; when the next one starts it notes how many read sections
    began in between. Readers call ``entered()`` inside their section, so a reader counted as waiting has entered
    (and left) before the next section can start: a shortfall would be a reader that waited for two batches.
    """

    def __init__(self) -> None:
        super().__init__()
        self._counts = threading.Lock()
        self._depth = 0
        self.sections = 0
        self.open = False
        self.reads = 0
        self._at_release: tuple[int, int] | None = None
        self.waits: list[tuple[int, int]] = []  # (readers waiting when a section ended, reads before the next)

    def acquire_write(self) -> None:
        super().acquire_write()
        self._depth += 1
        if self._depth == 1:
            with self._counts:
                self.sections += 1
                self.open = True
                if self._at_release is not None:
                    self.waits.append((self._at_release[1], self.reads - self._at_release[0]))

    def release_write(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            with self._counts:
                self.open = False
                self._at_release = (self.reads, self.waiting_readers)
        super().release_write()

    def entered(self) -> bool:
        """Count one read section; True if a write section is open (which must never be)."""
        with self._counts:
            self.reads += 1
            return self.open


@dataclass
class Reads:
    """What the reader threads saw."""

    errors: list[str] = field(default_factory=list)
    uncommitted: list[str] = field(default_factory=list)
    inside_a_batch: int = 0
    new_notes_seen: list[int] = field(default_factory=list)  # per read: how many new notes were committed
    chunks_checked: int = 0


@dataclass
class Scenario:
    store: KnowledgeStore
    engine: SearchEngine
    lock: CountingLock
    reads: Reads
    report: IngestReport
    stages: list[tuple[str, StageState, str]]
    note_ids: list[str]
    corpus: Path


def _corpus(root: Path) -> tuple[Path, list[str]]:
    """The example corpus plus ``NOTES`` generated notes under notes/."""
    folder = root / "corpus"
    shutil.copytree(EXAMPLES, folder, dirs_exist_ok=True)
    paths = synthetic_corpus.write_corpus(folder / "notes", NOTES)
    return folder, [document_id_for(p.relative_to(folder).as_posix(), folder.name) for p in paths]


@dataclass
class Reader:
    """One reader thread's tools, and the ids of the documents it checks against."""

    store: KnowledgeStore
    engine: SearchEngine
    session: EvidenceSession
    all_ids: list[str]
    note_ids: list[str]


def _read_once(reader: Reader, query: str, reads: Reads) -> None:
    """One request, as the server runs it: everything inside one read section, checked against its versions."""
    store, engine, session = reader.store, reader.engine, reader.session
    with store.reading():
        if isinstance(store.rw_lock, CountingLock) and store.rw_lock.entered():
            reads.inside_a_batch += 1
        versions = store.graph.document_versions(reader.all_ids)
        found: list[tuple[str, str]] = []
        for result in engine.search_sync(query, HYBRID).results:
            for item in (result.item, result.parent):
                if isinstance(item, Chunk):
                    found.append((item.document_id, item.document_version))
        for hit in session.discover(query, limit=10).hits:
            evidence = EvidenceId.parse(hit.id)
            found.append((evidence.document_id, evidence.version))
    reads.new_notes_seen.append(sum(1 for i in reader.note_ids if i in versions))
    reads.chunks_checked += len(found)
    reads.uncommitted += [f"{doc}@{version}" for doc, version in found if versions.get(doc) != version]


def _example_ids() -> list[str]:
    """The ids of the example files in the folder ``_corpus`` makes (ids contain the folder's name)."""
    return [document_id_for(p.name, "corpus") for p in EXAMPLES.iterdir()]


@pytest.fixture(scope="module")
def scenario(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Iterator[Scenario]:
    root = tmp_path_factory.mktemp("concurrent")
    config = load_config()
    store = open_knowledge_store(AgragSettings(data_dir=root / "data"), config.vector_store, embedder)
    shutil.copytree(EXAMPLES, root / "corpus")
    ingest_into(str(root / "corpus"), config, store, embedder)  # the examples first, then the same folder with notes
    corpus, note_ids = _corpus(root)
    lock = store.rw_lock = CountingLock()
    engine = SearchEngine(store, embedder, RetrievalSettings())
    reads, stop = Reads(), threading.Event()

    def reader(index: int) -> None:
        tools = Reader(store, engine, EvidenceSession(store, embedder), [*note_ids, *_example_ids()], note_ids)
        turn = index
        while not stop.is_set():
            try:
                _read_once(tools, QUERIES[turn % len(QUERIES)], reads)
            except Exception as exc:  # every failure of a reader is reported by the test
                reads.errors.append(f"{type(exc).__name__}: {exc}")
            turn += 1
            stop.wait(0.002)  # leave the two cores some room for the ingestion

    stages: list[tuple[str, StageState, str]] = []
    control = IngestControl(lambda name, state, line: stages.append((name, state, line)))
    threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(READERS)]
    for thread in threads:
        thread.start()
    try:
        report = ingest_into(str(corpus), load_config(BATCH), store, embedder, control=control)
    finally:
        stop.set()
        for thread in threads:
            thread.join(120)
    yield Scenario(store, engine, lock, reads, report, stages, note_ids, corpus)
    store.close()


def test_readers_never_fail_and_never_see_an_uncommitted_version(scenario: Scenario) -> None:
    reads = scenario.reads
    assert reads.errors == []
    assert len(reads.new_notes_seen) > READERS and reads.chunks_checked > 0
    assert reads.uncommitted == [], "a chunk of a version its read section did not see committed"
    assert reads.inside_a_batch == 0, "a read section ran while a commit batch was open"


def test_readers_read_while_the_write_stage_committed(scenario: Scenario) -> None:
    assert scenario.report.documents_ingested == NOTES
    partial = [n for n in scenario.reads.new_notes_seen if 0 < n < NOTES]
    assert partial, "some reads ran between the first and the last commit batch (they saw part of the notes)"
    assert scenario.lock.sections >= 5, "the notes were written in several commit batches"


def test_a_reader_waits_for_one_commit_batch_at_most(scenario: Scenario) -> None:
    waits = scenario.lock.waits
    assert waits, "more than one write section"
    short = [(waiting, entered) for waiting, entered in waits if entered < waiting]
    assert short == [], "a reader that waited through a batch was still waiting when the next one began"
    assert any(waiting for waiting, _ in waits), "readers did wait for a batch at least once"


def test_the_new_notes_are_found_right_after_the_run(
    scenario: Scenario, embedder: SentenceTransformersTextEmbedder
) -> None:
    note = (scenario.corpus / "notes" / "note_004.md").read_text(encoding="utf-8")
    query = note.split("## Team\n\n", 1)[1].split(".", 1)[0]  # "<person> works with <person> on the <system>"
    with scenario.store.reading():
        results = scenario.engine.search_sync(query, HYBRID).results
        hits = EvidenceSession(scenario.store, embedder).discover(query).hits
    found = {r.item.document_id for r in results if isinstance(r.item, Chunk)}
    assert found & set(scenario.note_ids)
    assert {EvidenceId.parse(h.id).document_id for h in hits} & set(scenario.note_ids)


def test_every_stage_is_reported_as_it_starts_and_ends(scenario: Scenario) -> None:
    ran = ("load", "select-changed", "chunk", "extract", "prune", "resolve", "embed", "write", "communities", "reports")
    states = [(name, state) for name, state, _ in scenario.stages]
    assert states == [(name, state) for name in ran for state in (StageState.RUNNING, StageState.COMPLETED)]
    lines = {name: line for name, state, line in scenario.stages if state == StageState.COMPLETED}
    final = stage_lines(scenario.report)
    for name in ("load", "select-changed", "prune", "resolve", "embed", "write", "communities", "reports"):
        assert lines[name] == final[name], f"{name}: the stage's line is the CLI table's"
    assert lines["chunk"] == final["chunk"].rsplit(", ", 1)[0], "without the superseded count, known after the write"


def test_without_changes_the_changed_stages_are_skipped(
    scenario: Scenario, embedder: SentenceTransformersTextEmbedder
) -> None:
    stages: list[tuple[str, StageState, str]] = []
    control = IngestControl(lambda name, state, line: stages.append((name, state, line)))
    report = ingest_into(str(scenario.corpus), load_config(BATCH), scenario.store, embedder, control=control)
    assert report.documents_ingested == 0
    skipped = {name: line for name, state, line in stages if state == StageState.SKIPPED}
    assert skipped == {
        **dict.fromkeys(("chunk", "extract", "prune", "resolve", "embed", "write"), "no new or changed documents"),
        **dict.fromkeys(("communities", "reports"), "the graph did not change since the communities were last made"),
    }


def test_a_cancelled_run_stops_between_commit_batches_and_the_next_run_resumes(
    prefect_harness: None, tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    corpus, note_ids = _corpus(tmp_path)
    config = load_config(BATCH)
    clean = open_knowledge_store(AgragSettings(data_dir=tmp_path / "clean"), config.vector_store, embedder)
    store = open_knowledge_store(AgragSettings(data_dir=tmp_path / "data"), config.vector_store, embedder)
    try:
        ingest_into(str(corpus), config, clean, embedder)
        stages: list[tuple[str, StageState, str]] = []
        control = IngestControl(lambda name, state, line: stages.append((name, state, line)))

        class CancelOnceNotesCommit(ReadWriteLock):
            def release_write(self) -> None:
                super().release_write()
                if not self.write_held and not control.cancelled and store.graph.document_versions(note_ids):
                    control.cancel("asked by the test after a commit batch")

        store.rw_lock = CancelOnceNotesCommit()
        with pytest.raises(IngestInterruptedError, match=r"stopped at a safe point \(asked by the test"):
            ingest_into(str(corpus), config, store, embedder, control=control)
        committed = len(store.graph.document_versions([*note_ids, *_example_ids()]))
        assert 0 < committed < NOTES + 9, "stopped between two commit batches"
        assert stages[-1][:2] == ("write", StageState.FAILED) and "safe point" in stages[-1][2]

        report = ingest_into(str(corpus), config, store, embedder)
        assert report.documents_ingested == NOTES + 9 - committed
        assert report.documents_resumed["resolve"] == report.documents_ingested, "written with the journaled resolution"
        assert dump(store) == dump(clean), "the resumed run stored exactly what an uninterrupted one stores"
    finally:
        clean.close()
        store.close()
