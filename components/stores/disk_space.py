"""``DiskSpace``: the free space of the disk a data dir lives on, checked before the stores touch it.

Why a check and not only error handling: Qdrant Edge maps its files into memory, and a page of a mapped file that
the disk cannot back kills the process with SIGBUS (exit 135) instead of returning an error, in the middle of
whatever it was doing. Measured with qdrant-edge-py 0.9 on a data dir of the example corpus:

- Writing into a preallocated (sparse) file of the shard, its write-ahead log or storage pages, needs a free block
  for each new page; on a full ext4 or tmpfs that is SIGBUS.
- Opening a shard reads every page of its in-memory files (``populate``). On ext4 reading a hole needs nothing, but
  on a memory-backed file system (tmpfs) it allocates the page: a shard written and not opened since needs up to
  about 50 MB per collection to open, and a data dir opened with 1 MB free died with SIGBUS in ``status``.
- Opening a shard also rewrites its ``edge_config.json`` and applies small journals (about 12 KB for a data dir):
  with no block free at all that fails with ENOSPC (which agrag then took for damage) or SIGBUS.

So every open requires ``READ_MARGIN`` free plus, on a memory-backed disk, what the shards' open will allocate
(``QdrantEdgeVectorStore.open_room``); every write requires ``min_free`` (``AGRAG_MIN_FREE_MB``), and the stages
that write a lot require their own estimate. A store error that still says the disk is full (Kùzu, SQLite, Qdrant)
becomes ``NoSpaceLeftError`` too (``is_disk_full``).
"""

from __future__ import annotations

import errno
import os
from functools import cache
from pathlib import Path

from agrag.components import defaults
from agrag.components.disk_space_errors import COMMITTED_STAYS, FAILED_STEP, NOTHING_CHANGED, NoSpaceLeftError

KIB = 1024
MIB = 1024 * KIB
# What opening a data dir writes besides the shards' pages: their config files and journals, the lock file, the run
# registry (measured: 12 KB on ext4 for the example corpus), with room to spare, and well under "1 MB free".
READ_MARGIN = 512 * KIB
# Disk a written vector point costs with its share of the graph (measured: 4.6 KB a point for 6,000 chunks and 3,044
# entities of short notes, 4.9 KB for the vectors alone of 60-word texts), about three times over.
BYTES_PER_POINT = 16 * KIB
MEMORY_BACKED = frozenset({"tmpfs", "ramfs", "hugetlbfs"})
DISK_FULL_TEXTS = ("no space left on device", "os error 28", "database or disk is full", "disk quota exceeded")


def _existing(path: Path) -> Path:
    """``path`` or its nearest existing parent (a data dir that is not made yet lives on its parent's disk)."""
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def free_bytes(path: Path) -> int | None:
    """Bytes an ordinary process may still write on the disk of ``path``; None when the disk reports no size."""
    stats = os.statvfs(_existing(path))
    if stats.f_blocks == 0:  # ramfs and some virtual file systems: no limit to check against
        return None
    return stats.f_bavail * stats.f_frsize


@cache
def _file_system_of_device(device: int) -> str:
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    wanted = f"{os.major(device)}:{os.minor(device)}"
    for line in lines:
        fields = line.split()
        if len(fields) > 2 and fields[2] == wanted and " - " in line:
            return line.split(" - ", 1)[1].split()[0]
    return ""


def memory_backed(path: Path) -> bool:
    """Whether ``path`` is on a file system whose pages are memory (tmpfs): there, reading a hole allocates it."""
    return _file_system_of_device(os.stat(_existing(path)).st_dev) in MEMORY_BACKED


def holes(path: Path) -> int:
    """Bytes of ``path`` that no block backs yet (a sparse file's holes)."""
    stat = os.stat(path)
    return max(0, stat.st_size - stat.st_blocks * 512)


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised from) says the disk is full, in any store's words."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, NoSpaceLeftError):
            return True
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(text in str(seen).lower() for text in DISK_FULL_TEXTS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class DiskSpace:
    """The disk of one data dir: how much is free, and a ``NoSpaceLeftError`` when a step needs more.

    Usage:
        ```python
        space = DiskSpace(Path(".agrag"), min_free=64 * MIB)
        space.require(READ_MARGIN, "open the data dir")  # raises NoSpaceLeftError, naming the room and the fix
        space.require_to_write("write a commit batch")
        ```
    """

    def __init__(self, data_dir: Path, min_free: int = defaults.DISK_MIN_FREE_MB * MIB) -> None:
        self.data_dir = Path(data_dir)
        self.min_free = min_free

    def free(self) -> int | None:
        """Bytes free on the data dir's disk now (None: the disk reports no limit)."""
        return free_bytes(self.data_dir)

    def explains(self, exc: BaseException) -> bool:
        """Whether the disk being full explains ``exc``: it says so, or it is an I/O error and the disk has no room.

        SQLite in WAL mode reports a full disk as a "disk I/O error" when it cannot make its shared-memory file.
        """
        if is_disk_full(exc):
            return True
        free = self.free()
        return "i/o error" in str(exc).lower() and free is not None and free < READ_MARGIN

    def require(self, needed: int, doing: str, kept: str = NOTHING_CHANGED) -> None:
        """Raise ``NoSpaceLeftError`` unless ``needed`` bytes are free for ``doing`` (``kept`` says what stays)."""
        free = self.free()
        if free is not None and free < needed:
            raise NoSpaceLeftError(self.data_dir, doing, needed, free, kept)

    def require_to_write(self, doing: str, needed: int = 0, kept: str = COMMITTED_STAYS) -> None:
        """Raise ``NoSpaceLeftError`` unless ``min_free`` plus ``needed`` bytes are free before a write."""
        self.require(self.min_free + needed, doing, kept)

    def ran_out(self, doing: str, kept: str = FAILED_STEP, needed: int | None = None) -> NoSpaceLeftError:
        """The error for a store that met a full disk while ``doing`` (raise it ``from`` the store's error).

        ``needed`` is the room to name (default: ``min_free``, what a write asks for).
        """
        room = needed if needed is not None else max(self.min_free, READ_MARGIN)
        return NoSpaceLeftError(self.data_dir, doing, room, self.free() or 0, kept, ran_out=True)
