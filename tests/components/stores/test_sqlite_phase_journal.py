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


def test_an_output_larger_than_a_part_is_kept_in_parts_and_reads_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the real parts are 256 MiB (SQLite refuses a value over 1e9 bytes); 1 KiB parts show the same paths
    monkeypatch.setattr("agrag.components.stores.sqlite_phase_journal.PART_BYTES", 1024)
    path = tmp_path / "phases.sqlite"
    journal = SqlitePhaseJournal(path)
    big, small = PhaseKey("batch:x", "extract", "h"), PhaseKey("doc:a.md@v1", "chunk", "h")
    output = {"relations": [(f"e{i}", f"e{i + 1}", "WORKS_WITH") for i in range(400)]}
    journal.save_many([(big, output), (small, ["one chunk"])])
    journal.close()

    with sqlite3.connect(path) as db:
        parts = db.execute("SELECT part, length(data) FROM phase_parts WHERE subject = 'batch:x'").fetchall()
        others = db.execute("SELECT count(*) FROM phase_parts WHERE subject != 'batch:x'").fetchone()[0]
    assert len(parts) > 3 and all(size <= 1024 for _, size in parts), "every stored value stays under the part size"
    assert sorted(n for n, _ in parts) == list(range(len(parts))) and others == 0
    reopened = SqlitePhaseJournal(path)
    assert reopened.load_many([big, small]) == {big: output, small: ["one chunk"]}

    reopened.save(big, ["now small"])  # a replaced output leaves no parts behind
    assert reopened.load(big) == ["now small"]
    reopened.save(big, output)
    reopened.forget(["batch:x"], phase="extract")
    assert reopened.load(big) is None
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM phase_parts").fetchone()[0] == 0, "forgetting drops the parts"
