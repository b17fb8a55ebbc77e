"""A scripted LLM behind the OpenAI chat protocol: a real HTTP server on localhost that answers from a script.

The script is a function from the request (its messages) to the answer text. Every request is recorded, so tests
can count calls and check prompts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.support.json_post_server import error_answer, json_post_server

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

    def respond(body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        with lock:
            if state.failures_left > 0:
                state.failures_left -= 1
                return error_answer(500, "scripted failure", "server_error")
            state.requests.append(body)
            holding = state.hold_after is not None and len(state.answered) >= state.hold_after
            if holding:
                state.held += 1
        if holding:  # the client sent it and waits: a kill now catches the request in flight
            state.release.wait()
            return error_answer(503, "released unanswered", "server_error")
        try:
            answer = script(body["messages"])
        except Exception as exc:  # a broken script answers 400, so the test sees the client's error
            return error_answer(400, f"script failed: {exc}", "invalid_request_error")
        with lock:
            state.answered.append(body)
        message = {"role": "assistant", "content": answer}
        return 200, {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    with json_post_server(respond) as base_url:
        state.base_url = base_url
        try:
            yield state
        finally:
            state.release.set()
