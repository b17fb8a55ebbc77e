"""The server file: ``<data dir>/.agrag.server.json`` says which ``agrag serve`` holds the data dir and how to reach it.

``agrag serve`` writes it (mode 0600: it holds the server's local token) once its socket is bound and removes it when
it stops. The agrag CLI reads it with ``find_server``: a file whose process is gone, or whose process does not hold
the data dir's lock (a server killed with kill -9, its pid reused), counts as no server.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from agrag.components.stores.data_dir_lock import LOCK_FILE

SERVER_FILE = ".agrag.server.json"
_PROC_LOCKS = Path("/proc/locks")


@dataclass(frozen=True)
class ServerInfo:
    """A running server of a data dir.

    Attributes:
        url: Its base URL, e.g. ``http://127.0.0.1:8765``.
        pid: Its process id.
        started: When it started (ISO 8601, UTC).
        token: Its local token (unscoped), for the CLI of the same machine; never shown in a repr.
    """

    url: str
    pid: int
    started: str
    token: str = field(repr=False)


def server_file(data_dir: Path) -> Path:
    """Where the server file of ``data_dir`` lives."""
    return Path(data_dir) / SERVER_FILE


def write_server_file(data_dir: Path, url: str, token: str) -> ServerInfo:
    """Write the server file of this process (readable by its owner only), replacing any stale one."""
    info = ServerInfo(url, os.getpid(), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), token)
    path = server_file(data_dir)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump({"url": info.url, "pid": info.pid, "started": info.started, "token": token}, handle)
    os.replace(partial, path)  # a reader sees the old file or the whole new one
    return info


def remove_server_file(data_dir: Path) -> None:
    """Remove the server file if this process wrote it (a newer server's file is left alone)."""
    path = server_file(data_dir)
    info = _read(path)
    if info is not None and info.pid == os.getpid():
        path.unlink(missing_ok=True)


def find_server(data_dir: Path) -> ServerInfo | None:
    """The server that holds ``data_dir`` now, or None (no file, its process is gone, or it holds no lock)."""
    info = _read(server_file(data_dir))
    if info is None or not _alive(info.pid):
        return None
    return info if _holds_lock(Path(data_dir) / LOCK_FILE, info.pid) else None


def _read(path: Path) -> ServerInfo | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ServerInfo(str(data["url"]), int(data["pid"]), str(data["started"]), str(data["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, but another user's
    return True


def _holds_lock(lock_path: Path, pid: int) -> bool:
    """Whether ``pid`` holds the data dir's lock.

    On Linux ``/proc/locks`` names the holder of each ``flock`` by pid and inode, so nothing is locked to find out (a
    probe would make a server starting at that moment fail). Elsewhere the pid the lock file records must match.
    """
    try:
        inode = lock_path.stat().st_ino
    except OSError:
        return False
    if _PROC_LOCKS.exists():
        for line in _PROC_LOCKS.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            # "1: FLOCK  ADVISORY  WRITE 12345 08:01:1234567 0 EOF" (a blocked waiter has "->" after the number)
            if "->" in parts or len(parts) < 6 or parts[1] != "FLOCK":
                continue
            if parts[4] == str(pid) and parts[5].rsplit(":", 1)[-1] == str(inode):
                return True
        return False
    try:
        recorded = json.loads(lock_path.read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError, AttributeError):
        return False
    return bool(recorded == pid)
