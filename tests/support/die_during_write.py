"""Run ``agrag ingest ...`` and SIGKILL the process itself right after one call of a write-phase method.

The process dies as a power cut would kill it: no exception, no cleanup, stores and journal left as they are.
Usage: ``python -m tests.support.die_during_write METHOD ARGS...`` where METHOD is a ``KuzuGraphStore`` method.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any


def _die_after(method: str) -> None:
    from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

    original = getattr(KuzuGraphStore, method)

    def dying(self: KuzuGraphStore, *args: Any, **kwargs: Any) -> Any:
        original(self, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(KuzuGraphStore, method, dying)


if __name__ == "__main__":
    _die_after(sys.argv[1])
    from agrag.service.cli import main

    sys.argv = ["agrag", *sys.argv[2:]]
    main()
