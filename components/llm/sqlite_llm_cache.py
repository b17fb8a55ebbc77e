"""``SqliteLLMCache``: LLM answers kept on disk, keyed by model and the exact messages sent."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from agrag.components.errors import LLMError
from agrag.components.stores.sqlite_file import SqliteFile

_SCHEMA = "CREATE TABLE IF NOT EXISTS answers (key BLOB PRIMARY KEY, model TEXT NOT NULL, answer TEXT NOT NULL)"


class _Message(Protocol):
    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


def request_key(model: str, messages: Sequence[_Message], json_output: bool) -> bytes:
    """The cache key of one request: SHA-256 of the model, the answer format and every message in order."""
    payload = json.dumps([model, json_output, [[m.role, m.content] for m in messages]], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).digest()


class SqliteLLMCache:
    """One SQLite file of LLM answers, so the same prompt on the same chunk is never paid for twice.

    A re-ingest after a crash, a changed file whose other chunks kept their text, or a second run with the same
    settings reads its answers from here. The file opens on first use, so creating the cache touches nothing.

    Usage:
        ```python
        cache = SqliteLLMCache(Path(".agrag/llm-cache.sqlite"))
        client = OpenAIChatClient("http://localhost:11434/v1", "llama3.1", cache=cache)
        ```
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file = SqliteFile(self.path, [_SCHEMA], LLMError, "LLM answer cache")

    def get(self, key: bytes) -> str | None:
        """The stored answer of a request, or None."""
        with self._file.connection() as db:
            row = db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: bytes, model: str, answer: str) -> None:
        """Store an answer (a request already answered keeps its first answer)."""
        with self._file.connection() as db, db:
            db.execute("INSERT OR IGNORE INTO answers (key, model, answer) VALUES (?, ?, ?)", (key, model, answer))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, bytes) and self.get(key) is not None

    def __len__(self) -> int:
        with self._file.connection() as db:
            return int(db.execute("SELECT count(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        """Close the file, if it was opened."""
        self._file.close()
