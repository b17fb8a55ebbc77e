"""``SqliteEmbeddingCache``: vectors already computed for a text, kept on disk by model."""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agrag.components import defaults
from agrag.components.errors import EmbeddingError

_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)"
# Queries are kept apart, in insertion order (the rowid), so a server's stream of distinct questions stays bounded.
_QUERY_SCHEMA = "CREATE TABLE IF NOT EXISTS queries (key BLOB PRIMARY KEY, vector BLOB NOT NULL)"
_LOOKUP_BATCH = 400  # each key is bound twice; SQLite's limit on bound parameters is 999 on old builds
_BUSY_SECONDS = 30.0  # how long a statement waits for another process's write before the cache is skipped

logger = logging.getLogger(__name__)


def text_key(text: str) -> bytes:
    """The cache key of a text: its SHA-256 digest."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class SqliteEmbeddingCache:
    """A file of float32 vectors keyed by the SHA-256 of the embedded text, one file per model.

    Re-embedding the same text with the same model returns the stored vector, so a re-ingest after a chunking or
    extraction change, or an evaluation rerun, pays only for texts it has never seen. Passages are kept for good;
    query vectors (``put_queries``) only for the last ``query_capacity`` distinct queries, so a long-running server's
    cache stays bounded.

    Usage:
        ```python
        cache = SqliteEmbeddingCache(Path(".agrag/embedding-cache"), "all-MiniLM-L6-v2")
        found = cache.get_many(["some text"])  # {} the first time
        ```
    """

    def __init__(
        self, folder: Path, model: str, variant: str = "", query_capacity: int = defaults.EMBEDDING_CACHE_QUERIES
    ) -> None:
        """Keep the vectors of ``model`` (and ``variant``: e.g. ``int8`` for a quantized model) under ``folder``.

        Raises:
            EmbeddingError: the folder or its file cannot be used, or ``query_capacity`` is negative.
        """
        if query_capacity < 0:
            raise EmbeddingError(
                f"The embedding cache cannot keep {query_capacity} queries. Set AGRAG_EMBEDDING_CACHE_QUERIES to 0 "
                "(no query is kept) or more."
            )
        self.query_capacity = query_capacity
        name = f"{model}-{variant}" if variant else model
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"
        self.path = folder / f"{slug}.sqlite"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=_BUSY_SECONDS)
            # Readers of other processes (a server and a CLI on one cache folder) go on while one writes, and a commit
            # does not wait for the disk: what a crash loses is only vectors to compute again.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.execute(_QUERY_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise EmbeddingError(
                f"Cannot use the embedding cache at {self.path}: {exc}. "
                "Point AGRAG_EMBEDDING_CACHE_DIR at a writable folder, or unset it."
            ) from exc
        # One connection serves every thread of the process (a server embeds queries on many): one statement at a time.
        self._lock = threading.Lock()

    def get_many(self, texts: Sequence[str]) -> dict[int, list[float]]:
        """Vectors of the texts that are cached, by position in ``texts``.

        A cache that cannot be read (held by another process past the busy timeout, damaged) is logged and finds
        nothing: the texts are computed, as without a cache.
        """
        positions: dict[bytes, list[int]] = {}
        for index, text in enumerate(texts):
            positions.setdefault(text_key(text), []).append(index)
        keys = list(positions)
        found: dict[int, list[float]] = {}
        try:
            with self._lock:
                for start in range(0, len(keys), _LOOKUP_BATCH):
                    batch = keys[start : start + _LOOKUP_BATCH]
                    marks = ",".join("?" * len(batch))
                    rows = self._db.execute(
                        f"SELECT key, vector FROM vectors WHERE key IN ({marks}) "
                        f"UNION ALL SELECT key, vector FROM queries WHERE key IN ({marks})",
                        batch + batch,
                    )
                    for key, blob in rows.fetchall():
                        vector = np.frombuffer(blob, dtype=np.float32).tolist()
                        for index in positions[key]:
                            found[index] = vector
        except sqlite3.Error as exc:
            logger.warning("The embedding cache at %s could not be read (%s); computing the vectors", self.path, exc)
            return {}
        return found

    def put_many(self, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Store vectors for texts (a text already present keeps its vector); a failed write is logged, not raised."""
        rows = [(text_key(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vectors, strict=True)]
        try:
            with self._lock, self._db:
                self._db.executemany("INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)", rows)
        except sqlite3.Error as exc:
            logger.warning("The embedding cache at %s could not keep %d vectors (%s)", self.path, len(rows), exc)

    def put_queries(self, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Keep the vectors of queries among the last ``query_capacity`` ones (the oldest written go first)."""
        if self.query_capacity == 0:
            return
        rows = [(text_key(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vectors, strict=True)]
        try:
            with self._lock, self._db:
                self._db.executemany("INSERT OR REPLACE INTO queries (key, vector) VALUES (?, ?)", rows)
                # rowids grow with each insert, so the newest query_capacity rows are those above max - capacity
                self._db.execute(
                    "DELETE FROM queries WHERE rowid <= (SELECT max(rowid) FROM queries) - ?", (self.query_capacity,)
                )
        except sqlite3.Error as exc:
            logger.warning("The embedding cache at %s could not keep %d query vectors (%s)", self.path, len(rows), exc)

    def __len__(self) -> int:
        """How many passage vectors the file keeps (queries not counted)."""
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def queries_kept(self) -> int:
        """How many query vectors the file keeps."""
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM queries").fetchone()[0])

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()
