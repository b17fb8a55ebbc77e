"""``DataDirLock``: one process at a time per data dir, and a message that names the process holding it."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from agrag.components.errors import StoreLockedError

LOCK_FILE = ".agrag.lock"


class DataDirLock:
    """An exclusive ``flock`` on ``<data dir>/.agrag.lock``, with the holder's pid, command and start time inside.

    The embedded stores (Kùzu, Qdrant Edge) allow one process per data dir. Taking this lock first turns a second
    process's failure into a ``StoreLockedError`` that says which process holds the data dir, instead of a lock
    error from deep inside a store. The operating system releases the lock when the holder exits, even on kill -9.

    Usage:
        ```python
        with DataDirLock(Path(".agrag")):
            ...  # open and use the stores
        ```
    """

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / LOCK_FILE
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock.

        Raises:
            StoreLockedError: another process holds it; the message names that process.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read()
            handle.close()
            raise StoreLockedError(self._held_by(holder)) from None
        command = " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]) if sys.argv else "python"
        holder = json.dumps({"pid": os.getpid(), "command": command, "since": time.strftime("%Y-%m-%d %H:%M:%S")})
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(holder)
            handle.flush()
        except OSError as exc:  # a full disk: the lock is held all the same, only its holder's name is not written
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                handle.close()
                raise
        self._file = handle

    def release(self) -> None:
        """Give the lock back (closing the file releases it)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _held_by(self, holder: str) -> str:
        try:
            info = json.loads(holder)
            who = f"process {info['pid']} ({info['command']}), running since {info['since']}"
        except (ValueError, KeyError, TypeError):
            who = "another process"
        return (
            f"The data dir {self.path.parent} is in use by {who}. The embedded stores allow one process at a time: "
            "wait for it to finish or stop it, or point AGRAG_DATA_DIR at another data dir."
        )

    def __enter__(self) -> DataDirLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
