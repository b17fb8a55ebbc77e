"""``ReadWriteLock``: many readers or one writer, writer-preferring, reentrant per thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReadWriteLock:
    """Many threads may read at once; a writer has the lock to itself.

    - **Writer-preferring**: once a writer waits, new readers wait behind it, so a stream of busy readers cannot
      starve it; it enters when the readers already inside leave.
    - **Readers wait at most one write**: the readers that waited while a writer held the lock enter as soon as it
      releases, before the next writer (which then waits for them), so a writer that writes in a loop of short
      sections lets readers in between two sections.
    - **Reentrant per thread**, in both modes, and a thread that holds the write side may also enter the read side.
      A thread holding only the read side may not take the write side (two such threads would wait for each
      other forever): that raises ``RuntimeError``.

    Usage:
        ```python
        lock = ReadWriteLock()
        with lock.read():
            answer = store.search(...)
        with lock.write():
            store.write_batch(...)
        ```
    """

    def __init__(self) -> None:
        self._condition = threading.Condition(threading.Lock())
        self._readers: dict[int, int] = {}  # thread id -> depth of its read sections
        self._writer: int | None = None
        self._write_depth = 0
        self._waiting_writers = 0
        self._waiting_readers = 0
        self._next_ticket = 0  # readers take tickets in the order they start waiting
        self._admit_below = 0  # readers whose ticket is below this waited through a write: they go before writers
        self._admitted = 0  # of those, how many have not entered yet (the next writer waits for them)

    @contextmanager
    def read(self) -> Iterator[None]:
        """Hold the read side for the ``with`` block."""
        self.acquire_read()
        try:
            yield
        finally:
            self.release_read()

    @contextmanager
    def write(self) -> Iterator[None]:
        """Hold the write side for the ``with`` block."""
        self.acquire_write()
        try:
            yield
        finally:
            self.release_write()

    def acquire_read(self) -> None:
        """Enter the read side, waiting while a writer holds the lock or waits for it."""
        me = threading.get_ident()
        with self._condition:
            if self._writer == me or me in self._readers:  # reentrant: never wait for oneself
                self._readers[me] = self._readers.get(me, 0) + 1
                return
            if self._writer is not None or self._waiting_writers:
                ticket = self._next_ticket
                self._next_ticket += 1
                self._waiting_readers += 1
                try:
                    self._condition.wait_for(
                        lambda: self._writer is None and (not self._waiting_writers or ticket < self._admit_below)
                    )
                finally:
                    self._waiting_readers -= 1
                    if ticket < self._admit_below:  # counted as admitted when the writer released
                        self._admitted -= 1
                        self._condition.notify_all()  # the last one lets a waiting writer check again
            self._readers[me] = 1

    def release_read(self) -> None:
        """Leave the read side (the outermost release lets a waiting writer in).

        Raises:
            RuntimeError: this thread does not hold the read side.
        """
        me = threading.get_ident()
        with self._condition:
            depth = self._readers.get(me, 0)
            if depth == 0:
                raise RuntimeError("release_read() called by a thread that does not hold the read side.")
            if depth > 1:
                self._readers[me] = depth - 1
                return
            del self._readers[me]
            if not self._readers:
                self._condition.notify_all()

    def acquire_write(self) -> None:
        """Enter the write side, waiting until no other thread reads or writes.

        Raises:
            RuntimeError: this thread holds the read side but not the write side.
        """
        me = threading.get_ident()
        with self._condition:
            if self._writer == me:
                self._write_depth += 1
                return
            if me in self._readers:
                raise RuntimeError(
                    "A thread holding the read side cannot take the write side (two such threads would wait for each "
                    "other forever). Take the write side first: a writer may also read."
                )
            self._waiting_writers += 1
            try:
                self._condition.wait_for(lambda: self._writer is None and not self._readers and not self._admitted)
            except BaseException:
                self._waiting_writers -= 1
                self._condition.notify_all()  # readers that waited behind this writer may go
                raise
            self._waiting_writers -= 1
            self._writer = me
            self._write_depth = 1

    def release_write(self) -> None:
        """Leave the write side; the outermost release lets in every reader that waited during the write.

        Raises:
            RuntimeError: this thread does not hold the write side.
        """
        with self._condition:
            if self._writer != threading.get_ident():
                raise RuntimeError("release_write() called by a thread that does not hold the write side.")
            self._write_depth -= 1
            if self._write_depth:
                return
            self._writer = None
            self._admit_below = self._next_ticket
            self._admitted = self._waiting_readers
            self._condition.notify_all()

    @property
    def waiting_writers(self) -> int:
        """Threads waiting for the write side now (for status pages and tests)."""
        with self._condition:
            return self._waiting_writers

    @property
    def waiting_readers(self) -> int:
        """Threads waiting for the read side now (for status pages and tests)."""
        with self._condition:
            return self._waiting_readers

    @property
    def write_held(self) -> bool:
        """True when the calling thread holds the write side."""
        with self._condition:
            return self._writer == threading.get_ident()
