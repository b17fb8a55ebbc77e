"""A local HTTP server that answers JSON POSTs with a function: the scaffold of the scripted LLM servers."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Respond = Callable[[dict[str, Any]], "tuple[int, dict[str, Any]] | None"]
"""A request body to (HTTP status, JSON answer), or None to close the connection without an answer."""


@contextmanager
def json_post_server(respond: Respond) -> Iterator[str]:
    """Serve ``respond`` on a free loopback port for the block; yields the base URL ``http://127.0.0.1:<port>/v1``."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            answer = respond(body)
            if answer is None:
                return
            status, payload = answer
            data = json.dumps(payload).encode("utf-8")
            with contextlib.suppress(OSError):  # the client gave up waiting (a timeout or kill test)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def error_answer(status: int, message: str, kind: str) -> tuple[int, dict[str, Any]]:
    """An OpenAI-style error answer."""
    return status, {"error": {"message": message, "type": kind}}
