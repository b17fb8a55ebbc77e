"""Fill a data dir's disk right after the n-th call of a write-phase method, inside an ``agrag`` command's process.

What a disk that fills up during an ingestion looks like to agrag: another program writes a file that leaves only
``leave`` bytes free, between two commit batches. ``fill_after("commit_documents:1", filler, leave)``, given as the
``setup`` of ``tests.support.kill_points.run_agrag`` (which runs it in the forked command before the command), does
so right after the first commit batch of ``KuzuGraphStore``; ``fill`` takes the room at once.
"""

from __future__ import annotations

import os
from typing import Any


def fill(filler: str, leave: int) -> None:
    """Allocate ``filler`` so that its disk keeps ``leave`` bytes free (an ordinary process's view of it)."""
    stats = os.statvfs(os.path.dirname(filler))
    size = stats.f_bavail * stats.f_frsize - leave
    if size > 0:
        with open(filler, "ab") as out:
            os.posix_fallocate(out.fileno(), os.fstat(out.fileno()).st_size, size)


def fill_after(step: str, filler: str, leave: int) -> None:
    """From now on in this process, the ``N``-th call of ``KuzuGraphStore.METHOD`` (``step``: ``METHOD[:N]``, N 1
    if left out) fills the disk of ``filler`` right after it returns."""
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
