"""The server file: written private, found only while its process holds the data dir, removed by its writer only."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.service.server.server_file import find_server, remove_server_file, server_file, write_server_file

TOKEN = "owner-token-0123456789abcdef"


def test_a_server_holding_the_lock_is_found(tmp_path: Path) -> None:
    with DataDirLock(tmp_path):
        info = write_server_file(tmp_path, "http://127.0.0.1:8765", TOKEN)
        assert stat.S_IMODE(server_file(tmp_path).stat().st_mode) == 0o600
        assert find_server(tmp_path) == info
        assert (info.pid, info.token) == (os.getpid(), TOKEN) and TOKEN not in repr(info)
        remove_server_file(tmp_path)
        assert not server_file(tmp_path).exists() and find_server(tmp_path) is None


def test_a_file_without_the_lock_or_its_process_counts_as_no_server(tmp_path: Path) -> None:
    write_server_file(tmp_path, "http://127.0.0.1:8765", TOKEN)
    assert find_server(tmp_path) is None  # nobody holds the data dir
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    data = json.loads(server_file(tmp_path).read_text())
    server_file(tmp_path).write_text(json.dumps({**data, "pid": int(gone.stdout)}))
    with DataDirLock(tmp_path):
        assert find_server(tmp_path) is None  # the lock is ours, not the pid's the file names
    server_file(tmp_path).write_text("{not json")
    assert find_server(tmp_path) is None


def test_only_the_writer_removes_its_file(tmp_path: Path) -> None:
    write_server_file(tmp_path, "http://127.0.0.1:8765", TOKEN)
    data = json.loads(server_file(tmp_path).read_text())
    server_file(tmp_path).write_text(json.dumps({**data, "pid": 1}))  # a newer server's file
    remove_server_file(tmp_path)
    assert server_file(tmp_path).exists()
