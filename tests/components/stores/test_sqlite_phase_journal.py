import sqlite3
from pathlib import Path

import pytest

from agrag.components.data_models.phase_key import PhaseKey, batch_subject, config_hash, document_subject
from agrag.components.errors import StoreError
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal


def test_a_saved_phase_reads_back_under_its_key_only(tmp_path: Path) -> None:
    journal = SqlitePhaseJournal(tmp_path / "phases.sqlite")
    key = PhaseKey(document_subject("a.md", "v1"), "chunk", config_hash('{"max_chars": 1500}'))
    journal.save(key, ["chunk one", "chunk two"])
    journal.close()

    reopened = SqlitePhaseJournal(tmp_path / "phases.sqlite")
    assert reopened.load(key) == ["chunk one", "chunk two"], "it survives the process"
    assert reopened.load(PhaseKey(key.subject, "chunk", config_hash('{"max_chars": 800}'))) is None
    assert reopened.load(PhaseKey(document_subject("a.md", "v2"), "chunk", key.config_hash)) is None
    assert reopened.load(PhaseKey(key.subject, "extract", key.config_hash)) is None


def test_other_versions_of_the_same_documents_are_forgotten(tmp_path: Path) -> None:
    journal = SqlitePhaseJournal(tmp_path / "phases.sqlite")
    old, new, other = document_subject("a.md", "v1"), document_subject("a.md", "v2"), document_subject("b.md", "v1")
    batch = batch_subject([("a.md", "v2")])
    for subject in (old, new, other, batch):
        journal.save(PhaseKey(subject, "chunk", "h"), subject)

    journal.forget_documents_except({new}, ["a.md"])

    assert {s for s, *_ in journal.subjects()} == {new, other, batch}, "b.md and the batch are another run's work"
    journal.forget([batch, new])
    assert {s for s, *_ in journal.subjects()} == {other}


def test_an_output_that_no_longer_reads_means_the_phase_runs_again(tmp_path: Path) -> None:
    journal = SqlitePhaseJournal(tmp_path / "phases.sqlite")
    key = PhaseKey("doc:a.md@v1", "embed", "h")
    journal.save(key, [1.0])
    with sqlite3.connect(tmp_path / "phases.sqlite") as db:
        db.execute("UPDATE phases SET output = ?", (b"not a pickle",))
    assert journal.load(key) is None


def test_an_unwritable_place_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="ingestion phase journal"):
        SqlitePhaseJournal(tmp_path / "file" / "phases.sqlite").load(PhaseKey("s", "p", "h"))


def test_batch_subjects_do_not_depend_on_order() -> None:
    assert batch_subject([("a", "1"), ("b", "2")]) == batch_subject([("b", "2"), ("a", "1")])
    assert batch_subject([("a", "1")]) != batch_subject([("a", "2")])
