"""``KuzuOpenCheck``: open a Kùzu file in a child process first, so a damaged file gives a message, not a crash.

Kùzu 0.11.3 crashes the process (SIGSEGV, exit 139) when it opens a file with random bytes in its header, catalog
or metadata pages (measured: 5 of 12 single-page corruptions of a 37 MB graph, every one of them while opening).
So before this process opens a graph file, a child process opens it read-only (Kùzu replays a log left by a killed
writer in memory, without changing the file) and counts the rows of every table; only if the child ends well does
this process open the file. The child costs about 0.15 s, so it runs only when the file changed since an agrag
process last closed it cleanly: ``record()`` keeps a fingerprint (size, modification time and inode of the file and
its write-ahead log) beside the file after each clean close.

Usage:
    ```python
    check = KuzuOpenCheck(Path(".agrag/graph.kuzu"))
    check.run()  # raises CorruptedStoreError for a damaged file
    ...  # open, use and close the store
    check.record()
    ```
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

from agrag.components.disk_space_errors import NOTHING_CHANGED
from agrag.components.errors import CorruptedStoreError, StoreError, StoreLockedError
from agrag.components.stores.disk_space import READ_MARGIN, DiskSpace

FINGERPRINT_SUFFIX = ".agrag-open-check"
WAL_SUFFIX = ".wal"
# Opening and counting a graph of a few million rows stays well under this; a child still running is stopped.
CHECK_TIMEOUT_SECONDS = 300.0
RE_INGEST = (
    "The graph cannot be rebuilt from the vectors: move the data dir aside and ingest your documents again into a "
    "new data dir (AGRAG_DATA_DIR)."
)


class KuzuOpenCheck:
    """Checks in a child process that a Kùzu file opens and reads, when it changed since agrag last closed it."""

    def __init__(self, path: Path, buffer_pool_mb: int | None = None) -> None:
        self.path = Path(path)
        self.buffer_pool_mb = buffer_pool_mb
        self._record = self.path.with_name(self.path.name + FINGERPRINT_SUFFIX)

    def fingerprint(self) -> str:
        """Size, modification time and inode of the file and of its write-ahead log ('' for one that is missing)."""
        parts = []
        for path in (self.path, self.path.with_name(self.path.name + WAL_SUFFIX)):
            try:
                stat = path.stat()
            except FileNotFoundError:
                parts.append("")
                continue
            parts.append(f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ino}")
        return "|".join(parts)

    def needed(self) -> bool:
        """True when the file changed since an agrag process last closed it cleanly (or never did)."""
        try:
            return self._record.read_text(encoding="utf-8") != self.fingerprint()
        except OSError:
            return True

    def run(self) -> None:
        """Check the file, if it exists: refuse an empty one; open a changed one in a child process first.

        Raises:
            CorruptedStoreError: the file is empty, or the child crashed or could not read it.
            StoreLockedError: another process holds the file.
            StoreError: the child did not finish in time.
        """
        if not self.path.exists():
            return  # a new data dir: the store creates the file
        if self.path.is_file() and self.path.stat().st_size == 0:
            raise CorruptedStoreError(
                self.path.parent, f"the graph file {self.path.name} is empty (0 bytes)", RE_INGEST
            )
        if not self.needed():
            return
        command = [sys.executable, "-m", __name__, str(self.path), str(self.buffer_pool_mb or 0)]
        try:
            child = subprocess.run(
                command, capture_output=True, text=True, timeout=CHECK_TIMEOUT_SECONDS, check=False, env=os.environ
            )
        except subprocess.TimeoutExpired as exc:
            raise StoreError(
                f"Checking the graph file {self.path} took longer than {CHECK_TIMEOUT_SECONDS:.0f} s; is the disk slow "
                "or the file very large?"
            ) from exc
        if child.returncode == 0:
            return
        reason = (child.stderr.strip().splitlines() or [""])[-1]
        if "lock" in reason.lower():
            raise StoreLockedError(
                f"The graph store {self.path} is in use by another process. Stop the other agrag process (ingest or "
                "server) or point AGRAG_DATA_DIR elsewhere."
            )
        if "no space left" in reason.lower():  # not damage: the disk is full
            raise DiskSpace(self.path.parent).ran_out("check the graph file", NOTHING_CHANGED, READ_MARGIN)
        if child.returncode < 0:
            reason = f"Kùzu crashed opening it (signal {-child.returncode})"
        raise CorruptedStoreError(
            self.path.parent, f"the graph file {self.path.name} cannot be read: {reason}", RE_INGEST
        )

    def record(self) -> None:
        """Remember the file as it is now, after a clean close, so the next open skips the child process.

        A record that cannot be written (a full disk) only means the next open runs the check again.
        """
        with contextlib.suppress(OSError):
            if self.path.is_file():
                self._record.write_text(self.fingerprint(), encoding="utf-8")


def main(argv: list[str]) -> int:
    """The child: open the file read-only and read every table; exit 0 if that worked."""
    from agrag.components.stores.kuzu.table_counts import count_every_table  # noqa: PLC0415 (Kùzu only here)

    path, buffer_pool_mb = Path(argv[0]), int(argv[1])
    count_every_table(path, buffer_pool_mb or None)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as exc:  # the parent reads the last line
        print(f"{type(exc).__name__}: {exc}".replace("\n", " "), file=sys.stderr)
        sys.exit(1)
