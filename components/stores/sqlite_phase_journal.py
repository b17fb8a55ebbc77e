"""``SqlitePhaseJournal``: which ingestion phases finished, for which document version and configuration."""

from __future__ import annotations

import pickle
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agrag.components.data_models.phase_key import PhaseKey
from agrag.components.errors import StoreError
from agrag.components.stores.sqlite_file import SqliteFile

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS phases ("
    " subject TEXT NOT NULL, phase TEXT NOT NULL, config_hash TEXT NOT NULL,"
    " finished_at REAL NOT NULL, output BLOB NOT NULL,"
    " PRIMARY KEY (subject, phase, config_hash))"
)
_PARTS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS phase_parts ("
    " subject TEXT NOT NULL, phase TEXT NOT NULL, config_hash TEXT NOT NULL, part INTEGER NOT NULL,"
    " data BLOB NOT NULL, PRIMARY KEY (subject, phase, config_hash, part))"
)
# SQLite refuses a value over 1,000,000,000 bytes, and the extract and resolve outputs of one run over a million
# chunks are about twice that pickled: such an output is kept in parts of this size, its row holding a marker.
PART_BYTES = 256 * 2**20
_PARTS_MARKER = b"agrag-parts:"  # a pickle starts with its protocol opcode, never with this
_KEY = "subject = ? AND phase = ? AND config_hash = ?"


class SqlitePhaseJournal:
    """Phase markers of ingestion, each stored with its phase's output, in one SQLite file of the data dir.

    A marker and its output are written in one transaction, so a run killed at any point leaves either both or
    neither; a run started again reads finished work from here and redoes only the rest. Markers of document
    versions that are committed to the graph are dropped (the graph's ``Document.version`` is then the marker).
    The file opens on first use.

    Usage:
        ```python
        journal = SqlitePhaseJournal(Path(".agrag/phases.sqlite"))
        key = PhaseKey(document_subject("guide.md", "3f2a9c1b"), "chunk", "a1b2c3")
        chunks = journal.load(key)
        if chunks is None:
            chunks = chunk(document)
            journal.save(key, chunks)
        ```
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        # WAL with synchronous=NORMAL: a commit survives the process being killed without an fsync per document;
        # a power cut can lose the last commits, which the next run then simply redoes.
        pragmas = ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"]
        self._file = SqliteFile(self.path, [*pragmas, _SCHEMA, _PARTS_SCHEMA], StoreError, "ingestion phase journal")

    def load(self, key: PhaseKey) -> Any | None:
        """The output of a finished phase, or None when it has not finished (or its output no longer reads)."""
        return self.load_many([key]).get(key)

    def load_many(self, keys: Sequence[PhaseKey]) -> dict[PhaseKey, Any]:
        """The outputs of the finished phases among ``keys``."""
        found: dict[PhaseKey, Any] = {}
        with self._file.connection() as db:
            for key in keys:
                where = (key.subject, key.phase, key.config_hash)
                row = db.execute(f"SELECT output FROM phases WHERE {_KEY}", where).fetchone()
                if row is None:
                    continue
                output = bytes(row[0])
                if output.startswith(_PARTS_MARKER):
                    parts = db.execute(f"SELECT data FROM phase_parts WHERE {_KEY} ORDER BY part", where)
                    output = b"".join(bytes(part[0]) for part in parts)
                try:
                    found[key] = pickle.loads(output)
                except Exception:  # written by another agrag version: the phase simply runs again
                    continue
        return found

    def save(self, key: PhaseKey, output: Any) -> None:
        """Mark a phase finished with its output (replacing an earlier output of the same key)."""
        self.save_many([(key, output)])

    def save_many(self, items: Sequence[tuple[PhaseKey, Any]]) -> None:
        """Mark several phases finished with their outputs, in one transaction."""
        now = time.time()
        with self._file.connection() as db, db:
            for key, output in items:
                where = (key.subject, key.phase, key.config_hash)
                blob = pickle.dumps(output, protocol=pickle.HIGHEST_PROTOCOL)
                db.execute(f"DELETE FROM phase_parts WHERE {_KEY}", where)
                if len(blob) > PART_BYTES:
                    view = memoryview(blob)
                    starts = range(0, len(blob), PART_BYTES)
                    db.executemany(
                        "INSERT INTO phase_parts (subject, phase, config_hash, part, data) VALUES (?, ?, ?, ?, ?)",
                        [(*where, n, view[start : start + PART_BYTES]) for n, start in enumerate(starts)],
                    )
                    blob = _PARTS_MARKER + str(len(starts)).encode()
                db.execute(
                    "INSERT OR REPLACE INTO phases (subject, phase, config_hash, finished_at, output)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (*where, now, blob),
                )

    def forget(self, subjects: Iterable[str], phase: str | None = None) -> None:
        """Drop the markers of these subjects (of one phase, or of all)."""
        rows = [(s,) for s in subjects]
        if not rows:
            return
        where = " WHERE subject = ?" + (" AND phase = ?" if phase else "")
        with self._file.connection() as db, db:
            for table in ("phases", "phase_parts"):
                db.executemany(f"DELETE FROM {table}{where}", [(*r, phase) for r in rows] if phase else rows)

    def forget_documents_except(self, kept: Iterable[str], document_ids: Iterable[str]) -> None:
        """Drop the markers of other versions of these documents than the ``kept`` subjects."""
        keep = set(kept)
        prefixes = [f"doc:{d}@" for d in document_ids]
        if not prefixes:
            return
        with self._file.connection() as db:
            subjects = [r[0] for r in db.execute("SELECT DISTINCT subject FROM phases WHERE subject LIKE 'doc:%'")]
        stale = [s for s in subjects if s not in keep and any(s.startswith(p) for p in prefixes)]
        self.forget(stale)

    def subjects(self) -> list[tuple[str, str, str, float]]:
        """Every marker as (subject, phase, config hash, finished at), oldest first."""
        with self._file.connection() as db:
            rows = db.execute("SELECT subject, phase, config_hash, finished_at FROM phases ORDER BY finished_at")
            return [(str(a), str(b), str(c), float(d)) for a, b, c, d in rows]

    def close(self) -> None:
        """Close the file, if it was opened."""
        self._file.close()
