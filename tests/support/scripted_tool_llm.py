"""A scripted tool-calling LLM behind the OpenAI chat protocol: a real HTTP server on localhost.

The sibling of ``scripted_llm``: the script sees each request's messages and tool definitions and answers with a
``Reply``: text, tool calls in the OpenAI format, or both. A tool call's arguments may be given as raw text, so a
test can send the malformed JSON a weak model writes. Every request is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.support.json_post_server import error_answer, json_post_server


@dataclass(frozen=True)
class Call:
    """One tool call of a reply: the tool's name and its arguments (a mapping, or raw text sent as written)."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """One assistant reply: text and/or tool calls, and the tokens it reports using."""

    text: str | None = None
    calls: tuple[Call, ...] = ()
    prompt_tokens: int = 10
    completion_tokens: int = 5


ToolScript = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Reply]
"""Answers a request's messages and tool definitions."""


@dataclass
class ScriptedToolLLM:
    """The running server: its ``base_url``, every request answered, and knobs a test may turn while it runs."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    failures_left: int = 0
    delay_seconds: float = 0.0

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools the first request offered."""
        return [tool["function"]["name"] for tool in self.requests[0].get("tools", [])]


def tool_results(messages: list[dict[str, Any]]) -> list[Any]:
    """The tool results a request carries, in order, as JSON data (text that is not JSON as it is)."""
    found = []
    for message in messages:
        if message.get("role") == "tool":
            try:
                found.append(json.loads(message["content"]))
            except json.JSONDecodeError:
                found.append(message["content"])
    return found


Step = Reply | Callable[[list[dict[str, Any]]], Reply]
"""A reply, or a function of the request's messages to one (to cite the ids an earlier tool result returned)."""


def steps(*replies: Step) -> ToolScript:
    """A script that answers the n-th request with the n-th step (and fails the request past the last one)."""
    queue = list(replies)
    lock = threading.Lock()

    def script(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        with lock:
            if not queue:
                raise RuntimeError("the script has no more replies")
            step = queue.pop(0)
        return step if isinstance(step, Reply) else step(messages)

    return script


@contextmanager
def scripted_tool_llm(script: ToolScript, *, fail_first: int = 0) -> Iterator[ScriptedToolLLM]:
    """Serve ``script`` at ``http://127.0.0.1:<port>/v1`` for the duration of the block.

    Args:
        script: Answers a request's messages and tools with a ``Reply``.
        fail_first: Answer the first N requests with HTTP 500 (to test retries).
    """
    state = ScriptedToolLLM(base_url="", failures_left=fail_first)
    lock = threading.Lock()
    counter = iter(range(1_000_000))

    def respond(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with lock:
            failing = state.failures_left > 0
            if failing:
                state.failures_left -= 1
            else:
                state.requests.append(body)
            delay = state.delay_seconds
        if failing:
            return error_answer(500, "scripted failure", "server_error")
        if delay:
            time.sleep(delay)
        try:
            reply = script(body["messages"], body.get("tools", []))
        except Exception as exc:  # a broken script answers 400, so the test sees the client's error
            return error_answer(400, f"script failed: {exc}", "invalid_request_error")
        return 200, _completion(reply, body.get("model", "scripted"), counter)

    with json_post_server(respond) as base_url:
        state.base_url = base_url
        yield state


def _completion(reply: Reply, model: str, counter: Iterator[int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": f"call_{next(counter)}",
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments),
                },
            }
            for call in reply.calls
        ]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.calls else "stop"}],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }
