"""Run ``agrag ...`` and fill its data dir's disk right after the n-th call of a write-phase method.

What a disk that fills up during an ingestion looks like to agrag: another program writes a file that leaves only
LEAVE bytes free, between two commit batches. Usage: ``python -m tests.support.fill_during_write METHOD[:N] FILLER
LEAVE ARGS...`` where METHOD is a ``KuzuGraphStore`` method (``commit_documents:1``: after the first commit batch),
FILLER the file to write and LEAVE the bytes to leave free on its disk.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def fill(filler: str, leave: int) -> None:
    """Allocate ``filler`` so that its disk keeps ``leave`` bytes free (an ordinary process's view of it)."""
    stats = os.statvfs(os.path.dirname(filler))
    size = stats.f_bavail * stats.f_frsize - leave
    if size > 0:
        with open(filler, "ab") as out:
            os.posix_fallocate(out.fileno(), os.fstat(out.fileno()).st_size, size)


def _fill_after(step: str, filler: str, leave: int) -> None:
    from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

    method, _, nth = step.partition(":")
    original = getattr(KuzuGraphStore, method)
    calls = 0

    def filling(self: KuzuGraphStore, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        result = original(self, *args, **kwargs)
        calls += 1
        if calls == int(nth or 1):
            fill(filler, leave)
        return result

    setattr(KuzuGraphStore, method, filling)


if __name__ == "__main__":
    _fill_after(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    from agrag.service.cli import main

    sys.argv = ["agrag", *sys.argv[4:]]
    main()
