"""A scripted LLM behind the OpenAI chat protocol: a real HTTP server on localhost that answers from a script.

The script is a function from the request (its messages) to the answer text. Every request is recorded, so tests
can count calls and check prompts.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[list[dict[str, str]]], str]


@dataclass
class ScriptedLLM:
    """The running server: its ``base_url`` for clients, and every request it received."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    answered: list[dict[str, Any]] = field(default_factory=list)
    failures_left: int = 0
    hold_after: int | None = None
    held: int = 0
    release: threading.Event = field(default_factory=threading.Event)

    def hold_after_answers(self, count: int) -> None:
        """Answer ``count`` more requests, then hold every later one unanswered until ``release`` is set."""
        self.hold_after = len(self.answered) + count

    @property
    def prompts(self) -> list[str]:
        """The last user message of each request."""
        return [r["messages"][-1]["content"] for r in self.requests]


@contextmanager
def scripted_llm(script: Script, *, fail_first: int = 0) -> Iterator[ScriptedLLM]:
    """Serve ``script`` at ``http://127.0.0.1:<port>/v1`` for the duration of the block.

    Args:
        script: Answers a request's messages with the assistant's text.
        fail_first: Answer the first N requests with HTTP 500 (to test retries).
    """
    state = ScriptedLLM(base_url="", failures_left=fail_first)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            with lock:
                if state.failures_left > 0:
                    state.failures_left -= 1
                    self._send(500, {"error": {"message": "scripted failure", "type": "server_error"}})
                    return
                state.requests.append(body)
                holding = state.hold_after is not None and len(state.answered) >= state.hold_after
                if holding:
                    state.held += 1
            if holding:  # the client sent it and waits: a kill now catches the request in flight
                state.release.wait()
                with contextlib.suppress(OSError):
                    self._send(503, {"error": {"message": "released unanswered", "type": "server_error"}})
                return
            try:
                answer = script(body["messages"])
            except Exception as exc:  # a broken script answers 400, so the test sees the client's error
                self._send(400, {"error": {"message": f"script failed: {exc}", "type": "invalid_request_error"}})
                return
            with lock:
                state.answered.append(body)
            self._send(
                200,
                {
                    "id": "chatcmpl-scripted",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "scripted"),
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                },
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
