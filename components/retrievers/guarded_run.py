"""Runs one search method so that its failure is reported, not raised: one failing method must not fail the search."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.search_result import SearchResult
from agrag.components.stores.vector_store import PayloadFilter

logger = logging.getLogger(__name__)


def guarded_run(method: str, search: Callable[[], list[SearchResult]]) -> MethodOutput:
    """Call ``search`` and return ``{"results": ..., "status": MethodStatus}``.

    Everything the method does, building its store filters included, must happen inside ``search``: any exception
    becomes a failed status and one warning line (its traceback only at DEBUG, e.g. ``agrag --verbose``); the
    engine decides whether the search as a whole fails.
    """
    started = time.perf_counter()
    try:
        results = search()
    # A retriever is the boundary between one method and the whole search: every failure is recorded on the
    # trace and logged, and the engine raises when all methods failed.
    except Exception as exc:
        elapsed = (time.perf_counter() - started) * 1000
        # The failure is on the trace: one line here, the chained traceback only for whoever asked for DEBUG.
        logger.warning("Retrieval method %s failed: %s: %s", method, type(exc).__name__, exc)
        logger.debug("Traceback of the failure of retrieval method %s", method, exc_info=True)
        status = MethodStatus(method, ok=False, count=0, elapsed_ms=elapsed, error=f"{type(exc).__name__}: {exc}")
        return {"results": [], "status": status}
    elapsed = (time.perf_counter() - started) * 1000
    return {"results": results, "status": MethodStatus(method, ok=True, count=len(results), elapsed_ms=elapsed)}


def guarded_filtered_run(
    method: str,
    condition: Callable[[], PayloadFilter],
    search: Callable[[PayloadFilter], list[SearchResult]],
) -> MethodOutput:
    """``guarded_run`` for a method that queries a store under a payload filter.

    ``condition`` builds the filter (it may ask a store, e.g. for the ids of a document filter's entities) and
    ``search`` runs with it; both run inside the guard, so a store failure while building the filter is recorded on
    the trace like any other failure of the method instead of failing the whole search.
    """
    return guarded_run(method, lambda: search(condition()))
