"""The server's log lines: agrag's own (a line per request, start and stop) to stderr, other libraries' warnings only.

Apart from ``http_server`` so that ``agrag mcp``, which sets them up before it knows whether it forwards to a running
server, does not import the HTTP app to do so.
"""

from __future__ import annotations

import logging
import sys


class _CurrentStderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to ``sys.stderr`` as it is when a line is logged, not as it was when the handler was made.

    A caller that swaps stderr for a while (a test runner capturing a command's output) closes its stream afterwards;
    a handler holding that stream would fail on every later line of the server's threads.
    """

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


def configure_logging(verbose: bool = False) -> None:
    """Send agrag's log lines (one per request, start and stop) to stderr; other libraries' warnings only."""
    handler = _CurrentStderrHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
    agrag = logging.getLogger("agrag")
    agrag.handlers = [handler]
    agrag.setLevel(logging.DEBUG if verbose else logging.INFO)
    agrag.propagate = False
    logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
