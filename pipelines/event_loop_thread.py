"""``EventLoopThread``: one long-lived event loop in a thread of its own, for sync callers of async code.

``asyncio.run`` per call makes a new loop and a new default thread pool every time; under many concurrent
requests those threads come and go by the hundred a second. One loop, with one bounded pool for the blocking steps
it hands off (``asyncio.to_thread``), serves every caller instead.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class EventLoopThread:
    """Runs coroutines on one event loop in a daemon thread, started on first use.

    Usage:
        ```python
        loop = EventLoopThread("agrag-search", workers=8)
        result = loop.run(engine.search_with_trace("Who wrote the Orion Planner?", HYBRID))
        loop.close()
        ```
    """

    def __init__(self, name: str, workers: int) -> None:
        """Name the loop's threads ``name``; ``workers`` bounds the pool its blocking steps run in."""
        self.name = name
        self.workers = workers
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                loop.set_default_executor(ThreadPoolExecutor(self.workers, thread_name_prefix=self.name))
                self._thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                self._thread.start()
                self._loop = loop
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and wait for its result (its exception is raised here).

        Raises:
            RuntimeError: called from the loop's own thread, which would wait for itself.
        """
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError(f"{self.name}: run() was called from the loop's own thread.")
        return asyncio.run_coroutine_threadsafe(coroutine, self._started()).result()

    def close(self) -> None:
        """Stop the loop and its pool (a later ``run`` starts them again)."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(loop.shutdown_default_executor(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
