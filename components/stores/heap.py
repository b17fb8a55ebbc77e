"""``release_free_heap``: hand the memory the C heap holds but no longer uses back to the system (glibc only)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
        return trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def release_free_heap() -> bool:
    """Return the C heap's free pages to the system; True if it could (glibc's ``malloc_trim``).

    Why: a store that opens by replaying a large log (Qdrant Edge's WAL) allocates and frees a lot at once; glibc
    keeps the freed pages mapped, so the process's resident memory stays at its peak for its whole life.
    """
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
