"""The files of a Qdrant Edge shard that opening it reads whole, and the room that takes on a memory-backed disk.

Qdrant Edge (qdrant-edge-py 0.9) creates most files of a segment at a fixed length with almost nothing written:
32 MiB vector chunks, 4 MiB payload-index pages, 1 MiB flag and tracker files. Opening a shard reads every page of
those it keeps in memory (the dense vectors of a growing segment, the payload indexes, the deletion flags). On ext4
reading a hole costs no block; on tmpfs it allocates the page, so a shard written and not opened since needs its
holes' worth of free space to open, or the open dies with SIGBUS. Measured on tmpfs: a growing segment of the
example corpus allocated 37.9 MB on open, a shard of 3,000 points in two segments 52.0 MB; the payloads
(``payload_storage/``) and the keyword vectors' storage (``vector_storage-bm25/``, read page by page when asked)
allocated nothing, nor did the write-ahead log.

``populated_holes`` is what an open will allocate there (the holes of every other file of the segments);
``back_populated`` allocates them while there is room (when agrag closes the shard), so the next open, on a disk
filled meanwhile, allocates nothing. ``tests/adversarial/test_r3_disk_full.py``
measures both on a real tmpfs, so a Qdrant Edge that reads other files on open fails there first.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from agrag.components.stores.disk_space import holes

SEGMENTS = "segments"
PAYLOADS = "payload_storage"
SPARSE_STORE = "store"  # the gridstore of a sparse vector's storage folder (``vector_storage-bm25/store``)


def populated_files(shard: Path) -> Iterator[Path]:
    """The files of ``shard``'s segments that an open reads whole.

    All but the payloads and the sparse (keyword) vectors' storage, deletion flags included: those are read page by
    page when asked for.
    """
    for root, folders, files in os.walk(Path(shard) / SEGMENTS):
        if SPARSE_STORE in folders:
            folders.clear()
            continue
        folders[:] = [f for f in folders if f != PAYLOADS]
        for name in files:
            yield Path(root, name)


def populated_holes(shard: Path) -> int:
    """Bytes an open of ``shard`` will allocate on a memory-backed disk: the holes of the files it reads whole."""
    total = 0
    for path in populated_files(shard):
        with contextlib.suppress(FileNotFoundError):  # a segment the optimizer just replaced
            total += holes(path)
    return total


def back_populated(shard: Path) -> bool:
    """Allocate the holes of the files an open of ``shard`` reads whole; False if the disk had no room for all.

    Contents do not change (an allocated hole still reads as zeros); only the disk's free space does.
    """
    for path in populated_files(shard):
        try:
            if holes(path) == 0:
                continue
            descriptor = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            continue
        try:
            os.posix_fallocate(descriptor, 0, os.fstat(descriptor).st_size)
        except OSError:
            return False
        finally:
            os.close(descriptor)
    return True


def segments_size(shard: Path) -> int:
    """Bytes the disk holds for ``shard``'s segments (allocated blocks, not the files' lengths)."""
    total = 0
    for root, _folders, files in os.walk(Path(shard) / SEGMENTS):
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                total += os.stat(Path(root, name)).st_blocks * 512
    return total
