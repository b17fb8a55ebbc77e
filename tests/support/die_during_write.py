"""Run ``agrag ingest ...`` and SIGKILL the process itself right after the n-th call of a write-phase method.

The process dies as a power cut would kill it: no exception, no cleanup, stores and journal left as they are.
Usage: ``python -m tests.support.die_during_write METHOD[:N] ARGS...`` where METHOD is a ``KuzuGraphStore`` method
and N (1 if not given) the call after which it dies: ``commit_documents:3`` dies after the third commit batch.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any


def _die_after(step: str) -> None:
    from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

    method, _, nth = step.partition(":")
    original = getattr(KuzuGraphStore, method)
    calls = 0

    def dying(self: KuzuGraphStore, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        result = original(self, *args, **kwargs)
        calls += 1
        if calls == int(nth or 1):
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(KuzuGraphStore, method, dying)


if __name__ == "__main__":
    _die_after(sys.argv[1])
    from agrag.service.cli import main

    sys.argv = ["agrag", *sys.argv[2:]]
    main()
