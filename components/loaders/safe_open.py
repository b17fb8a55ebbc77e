"""Reading a file's bytes without following symlinks below a files root (``openat`` with ``O_NOFOLLOW``).

A path checked when a folder is listed can change before it is read: a file or a folder on its way swapped for a
symlink to ``/etc`` would make a path-based ``open`` read outside the files root. ``read_below`` therefore opens the
files root, then every folder on the way one by one, each relative to the folder before it (``dir_fd``) with
``O_NOFOLLOW | O_DIRECTORY``, and the file itself with ``O_NOFOLLOW``: a symlink anywhere below the root is refused,
whenever it appeared. Size and type are checked on the open file (``fstat``), not on the path.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from agrag.components.loaders.file_failure import UnreadableFileError

_READ = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK  # O_NONBLOCK: a named pipe must not block the open
_FOLDER = os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY | os.O_NOFOLLOW
_NOT_FOLLOWED = "not followed below the files root (AGRAG_FILES_ROOT)"


def read_below(root: Path, parts: Sequence[str], max_bytes: int) -> bytes:
    """Read the regular file ``root/parts...``, opening each folder from ``root`` down without following symlinks.

    Args:
        root: The folder to start from (resolved; only it may be reached through a symlink).
        parts: The names of the folders on the way and of the file, e.g. ``("team", "notes.md")``.
        max_bytes: The largest file to read (``ingest.loader.max_file_bytes``).

    Returns:
        The file's bytes.

    Raises:
        UnreadableFileError: A name is empty, '.', '..' or hidden; a folder on the way or the file is a symlink (or
            is gone); the file is no regular file, is empty or is larger than ``max_bytes``.
    """
    if not parts or any(not part or part.startswith(".") or "/" in part for part in parts):
        raise UnreadableFileError("not a path inside the files root (an empty, hidden or '..' part)")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY)
    except OSError as exc:
        raise UnreadableFileError(f"could not open the folder {root}: {exc.strerror or exc}") from exc
    for depth, name in enumerate(parts[:-1], start=1):
        fd = _open_folder(fd, name, "/".join(parts[:depth]))  # closes the folder before it, whatever happens
    try:
        file_fd = os.open(parts[-1], _READ | os.O_NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        raise UnreadableFileError(_open_failed(exc, "it is a symlink, " + _NOT_FOLLOWED)) from exc
    finally:
        os.close(fd)
    return _read_open(file_fd, max_bytes)


def read_path(path: Path, max_bytes: int) -> bytes:
    """Read the regular file at ``path`` (symlinks followed: for folders read without a files root).

    Raises:
        UnreadableFileError: The file is gone, no regular file, empty or larger than ``max_bytes``.
    """
    try:
        fd = os.open(path, _READ)
    except OSError as exc:
        raise UnreadableFileError(_open_failed(exc, "symlink loop")) from exc
    return _read_open(fd, max_bytes)


def too_big(size: int, max_bytes: int) -> str:
    """The reason a file of ``size`` bytes is not read."""
    return f"{size} bytes is over the limit of {max_bytes} (ingest.loader.max_file_bytes)"


def _open_folder(parent: int, name: str, shown: str) -> int:
    """Open folder ``name`` of the folder ``parent`` without following a symlink; ``parent`` is closed either way."""
    try:
        return os.open(name, _FOLDER, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            why = f"the folder {shown!r} on its path is a symlink (or no longer a folder), {_NOT_FOLLOWED}"
        else:
            why = _open_failed(exc, "")
        raise UnreadableFileError(why) from exc
    finally:
        os.close(parent)


def _open_failed(exc: OSError, loop: str) -> str:
    if exc.errno == errno.ELOOP:
        return loop
    if exc.errno == errno.ENOENT:
        return "no such file (it was removed after the folder was listed)"
    if exc.errno == errno.ENXIO:  # a socket
        return "not a regular file"
    return f"could not read: {exc.strerror or exc}"


def _read_open(fd: int, max_bytes: int) -> bytes:
    """Read the open file ``fd`` (then closed) if it is a regular, non-empty file of at most ``max_bytes``."""
    info = os.fstat(fd)
    why = None
    if not stat.S_ISREG(info.st_mode):
        why = "not a regular file"
    elif info.st_size > max_bytes:
        why = too_big(info.st_size, max_bytes)
    elif info.st_size == 0:
        why = "empty file"
    if why is not None:
        os.close(fd)
        raise UnreadableFileError(why)
    with os.fdopen(fd, "rb") as file:
        try:
            raw = file.read(max_bytes + 1)  # the file may have grown since fstat
        except OSError as exc:
            raise UnreadableFileError(f"could not read: {exc.strerror or exc}") from exc
    if len(raw) > max_bytes:
        raise UnreadableFileError(too_big(len(raw), max_bytes))
    return raw
