"""The C heap's free pages go back to the system after a large allocation is freed (glibc, as on this machine)."""

import platform

import pytest

from agrag.components.stores.heap import release_free_heap


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_release_free_heap_trims_on_glibc() -> None:
    assert release_free_heap() in {True, False}  # 1 if it released memory, 0 if there was none to release
    blocks = [bytearray(4096) for _ in range(20_000)]  # small blocks come from the heap, not from their own mmap
    del blocks
    assert release_free_heap() is True
