"""``LARGE_BUILDS``: one in-memory snapshot of a whole store built at a time in a process."""

from __future__ import annotations

import threading

LARGE_BUILDS = threading.Lock()
"""Held while the ppr snapshot (``PassageGraphCache``) or the relation index (``KuzuRelationIndexReads``) is built.

Why: each build reads a whole table as columns and holds its transient arrays until done (at 1,000,000 chunks the
snapshot about 2 GB and the index about 1 GB); the index is built on a thread of its own, and when the two ran at
once a serving process peaked at 8,300 MiB instead of about 7,900. One after the other, the peak is the larger of
the two. The lock is process-wide because both read the one store a process owns.
"""
