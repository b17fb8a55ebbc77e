"""``ReadWriteLock`` with real threads: who may be inside together, and in which order waiting threads enter.

The tests assert orderings recorded by the threads themselves, never durations; a wait for a condition polls the
lock's own counters (``waiting_readers``, ``waiting_writers``) with a generous deadline that only ends a hung test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from agrag.components.stores.read_write_lock import ReadWriteLock

DEADLINE_S = 30.0


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, "the condition never held: the lock hangs"
        time.sleep(0.001)


class Log:
    """Events in the order the threads recorded them."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self._lock = threading.Lock()

    def add(self, event: str) -> None:
        with self._lock:
            self.events.append(event)

    def index(self, event: str) -> int:
        return self.events.index(event)


@contextmanager
def _threads(*targets: Callable[[], None]) -> Iterator[list[threading.Thread]]:
    threads = [threading.Thread(target=t, daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    try:
        yield threads
    finally:
        for thread in threads:
            thread.join(DEADLINE_S)
        assert not any(t.is_alive() for t in threads), "a thread never finished: the lock hangs"


def test_readers_share_the_lock() -> None:
    lock = ReadWriteLock()
    inside = threading.Barrier(8, timeout=DEADLINE_S)

    def reader() -> None:
        with lock.read():
            inside.wait()  # passes only when all eight are inside at the same time

    with _threads(*[reader] * 8):
        pass
    assert not inside.broken


def test_a_writer_is_alone_inside() -> None:
    lock = ReadWriteLock()
    state = {"readers": 0, "writers": 0}
    overlaps: list[dict[str, int]] = []
    guard = threading.Lock()

    def enter(kind: str) -> None:
        with guard:
            state[kind] += 1
            if state["writers"] > 1 or (state["writers"] and state["readers"]):
                overlaps.append(dict(state))

    def leave(kind: str) -> None:
        with guard:
            state[kind] -= 1

    def reader() -> None:
        for _ in range(300):
            with lock.read():
                enter("readers")
                leave("readers")

    def writer() -> None:
        for _ in range(100):
            with lock.write():
                enter("writers")
                leave("writers")

    with _threads(reader, reader, reader, writer, writer):
        pass
    assert overlaps == []


def test_busy_readers_cannot_starve_a_writer() -> None:
    lock = ReadWriteLock()
    stop = threading.Event()
    log = Log()
    reading = threading.Barrier(21, timeout=DEADLINE_S)

    def busy_reader() -> None:
        reading.wait()
        while not stop.is_set():
            with lock.read():
                time.sleep(0.0005)  # some work, so the 20 readers always overlap and the lock is never free

    def writer() -> None:
        with lock.write():
            log.add("writer in")
        stop.set()

    with _threads(*[busy_reader] * 20):
        reading.wait()
        with _threads(writer):
            pass
    assert log.events == ["writer in"]


def test_a_new_reader_waits_behind_a_waiting_writer() -> None:
    lock = ReadWriteLock()
    log = Log()
    first_inside, first_may_leave = threading.Event(), threading.Event()

    def first_reader() -> None:
        with lock.read():
            first_inside.set()
            first_may_leave.wait(DEADLINE_S)
            log.add("first reader out")

    def writer() -> None:
        with lock.write():
            log.add("writer in")

    def second_reader() -> None:
        with lock.read():
            log.add("second reader in")

    with _threads(first_reader):
        first_inside.wait(DEADLINE_S)
        with _threads(writer):
            _until(lambda: lock.waiting_writers == 1)
            with _threads(second_reader):
                _until(lambda: lock.waiting_readers == 1)
                first_may_leave.set()
    assert log.events == ["first reader out", "writer in", "second reader in"]


def test_readers_that_waited_through_a_write_go_before_the_next_write() -> None:
    lock = ReadWriteLock()
    log = Log()
    first_section, reader_waits = threading.Event(), threading.Event()

    def writer() -> None:  # two sections in a row, as ingestion writes its commit batches
        with lock.write():
            log.add("batch 1 in")
            first_section.set()
            reader_waits.wait(DEADLINE_S)
            log.add("batch 1 out")
        with lock.write():
            log.add("batch 2 in")

    def reader() -> None:
        with lock.read():
            log.add("reader in")
            log.add("reader out")

    with _threads(writer):
        first_section.wait(DEADLINE_S)
        with _threads(reader):
            _until(lambda: lock.waiting_readers == 1)
            reader_waits.set()
    assert log.events == ["batch 1 in", "batch 1 out", "reader in", "reader out", "batch 2 in"]


def test_a_reader_reenters_past_a_waiting_writer() -> None:
    lock = ReadWriteLock()
    log = Log()
    inside = threading.Event()

    def reader() -> None:
        with lock.read():
            inside.set()
            _until(lambda: lock.waiting_writers == 1)
            with lock.read():  # would deadlock if a waiting writer blocked the thread's own nested read
                log.add("nested read")

    def writer() -> None:
        with lock.write():
            log.add("writer in")

    with _threads(reader):
        inside.wait(DEADLINE_S)
        with _threads(writer):
            pass
    assert log.events == ["nested read", "writer in"]


def test_the_write_side_is_reentrant_and_may_read() -> None:
    lock = ReadWriteLock()
    with lock.write():
        with lock.write(), lock.read(), lock.read():
            assert lock.write_held
        assert lock.write_held
    assert not lock.write_held
    log = Log()

    def other_writer() -> None:
        with lock.write():
            log.add("other writer in")

    with _threads(other_writer):
        pass
    assert log.events == ["other writer in"], "the nested sections released the lock completely"


def test_a_reader_cannot_upgrade_to_writer() -> None:
    lock = ReadWriteLock()
    with lock.read(), pytest.raises(RuntimeError, match="Take the write side first"), lock.write():
        pass
    with lock.write():  # the failed upgrade left nothing held
        pass


def test_releasing_what_is_not_held_is_an_error() -> None:
    lock = ReadWriteLock()
    with pytest.raises(RuntimeError, match="does not hold the read side"):
        lock.release_read()
    with pytest.raises(RuntimeError, match="does not hold the write side"):
        lock.release_write()
