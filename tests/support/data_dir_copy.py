"""Copy an ingested data dir for a test the way ``cp`` does: files with holes keep their holes.

Qdrant Edge creates its write-ahead log and storage pages as 32 MiB files with almost nothing written (a data dir of
the example corpus: 15 such files, 1.2 MB allocated). ``shutil.copytree`` copies every byte of them, writing about
500 MB of zeros per copy (0.3-0.6 s, and a minute of the suite's time in a py-spy profile); this copies only the
parts that hold data (``SEEK_DATA``/``SEEK_HOLE``) and gives the copy the same length, so it reads the same.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path


def copy_sparse(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> str:
    """Copy one file's data regions (and its metadata, as ``shutil.copy2``); holes stay holes. Returns ``target``."""
    with open(source, "rb") as reader, open(target, "wb") as writer:
        size = os.fstat(reader.fileno()).st_size
        position = 0
        while position < size:
            try:
                start = os.lseek(reader.fileno(), position, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # only a hole is left
                    break
                raise
            end = os.lseek(reader.fileno(), start, os.SEEK_HOLE)
            _copy_range(reader.fileno(), writer.fileno(), start, end)
            position = end
        writer.truncate(size)
    shutil.copystat(source, target)
    return str(target)


def _copy_range(reader: int, writer: int, start: int, end: int) -> None:
    """Copy bytes ``start:end`` in place; by reads and writes where the kernel copies nothing between the two disks."""
    try:
        while start < end:
            copied = os.copy_file_range(reader, writer, end - start, start, start)
            if copied == 0:
                return
            start += copied
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP):
            raise
        while start < end:
            block = os.pread(reader, min(end - start, 1 << 20), start)
            if not block:
                return
            start += os.pwrite(writer, block, start)


def copy_data_dir(source: Path, target: Path) -> Path:
    """A copy of the (closed) data dir ``source`` at ``target``; returns ``target``."""
    return Path(shutil.copytree(source, target, copy_function=copy_sparse))
