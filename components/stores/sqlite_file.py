"""``SqliteFile``: one SQLite file of the data dir, opened on first use and shared between threads."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from agrag.components.disk_space_errors import NoSpaceLeftError
from agrag.components.errors import AgragError
from agrag.components.stores.disk_space import DiskSpace


class SqliteFile:
    """A lazily opened SQLite connection behind one lock, for the small key-value files of a data dir.

    Usage:
        ```python
        file = SqliteFile(Path(".agrag/phases.sqlite"), [SCHEMA], StoreError, "ingestion phase journal")
        with file.connection() as db:
            db.execute("SELECT 1")
        ```
    """

    def __init__(self, path: Path, schema: Sequence[str], error: type[AgragError], what: str) -> None:
        """Remember where the file is; nothing is touched until the first ``connection()``.

        Args:
            path: The file.
            schema: Statements run once when the file opens (``CREATE TABLE IF NOT EXISTS ...``).
            error: The error raised when the file cannot be created or opened.
            what: What the file is, for that error's message.
        """
        self.path = Path(path)
        self._schema = tuple(schema)
        self._error = error
        self._what = what
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """The open connection, held by this thread until the block ends.

        Raises:
            AgragError: of the given type, when the file cannot be created or opened.
            NoSpaceLeftError: the disk is full (opening it, or a statement of the block).
        """
        with self._lock:
            if self._db is None:
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    db = sqlite3.connect(self.path, check_same_thread=False)
                    for statement in self._schema:
                        db.execute(statement)
                except (OSError, sqlite3.Error) as exc:
                    if (space := DiskSpace(self.path.parent)).explains(exc):
                        raise space.ran_out(f"open the {self._what}") from exc
                    raise self._error(f"Cannot use the {self._what} at {self.path}: {exc}.") from exc
                self._db = db
            try:
                yield self._db
            except Exception as exc:  # SQLite's "database or disk is full", however the block wrapped it
                if not isinstance(exc, NoSpaceLeftError) and (space := DiskSpace(self.path.parent)).explains(exc):
                    raise space.ran_out(f"write the {self._what}") from exc
                raise

    def close(self) -> None:
        """Close the file, if it was opened."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
