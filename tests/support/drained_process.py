"""``DrainedProcess``: a subprocess whose stdout and stderr are read all along, so it never blocks on a full pipe.

A server that logs every request fills a 64 KiB pipe after a few hundred requests; if the test reads its output
only at the end, the server blocks in a write and every request it serves hangs (``agrag serve`` under four reading
clients wrote 54 KB in 35 s).
"""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Callable
from typing import IO


class DrainedProcess:
    """Wraps a ``Popen`` started with ``stdout=PIPE, stderr=PIPE, text=True``; threads keep every line it writes."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: queue.Queue[str] = queue.Queue()  # stdout lines, for a caller waiting on one
        self._out: list[str] = []
        self._err: list[str] = []
        self._readers = [
            threading.Thread(target=_drain, args=(process.stdout, self._keep_out), daemon=True),
            threading.Thread(target=_drain, args=(process.stderr, self._err.append), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _keep_out(self, line: str) -> None:
        self._out.append(line)
        self.lines.put(line)

    @property
    def stdout(self) -> str:
        """What it wrote to stdout so far (all of it once it ended)."""
        return "".join(self._out)

    @property
    def stderr(self) -> str:
        """What it wrote to stderr so far (all of it once it ended)."""
        return "".join(self._err)

    def wait(self, timeout: float) -> int:
        """Wait for it to end and for its output to be read; its exit code."""
        code = self.process.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=10)
        return code


def _drain(stream: IO[str] | None, keep: Callable[[str], None]) -> None:
    assert stream is not None
    for line in stream:
        keep(line)
