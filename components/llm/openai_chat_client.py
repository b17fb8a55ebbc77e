"""``OpenAIChatClient``: one chat completion at a time from any OpenAI-compatible endpoint, JSON answers parsed."""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agrag.components.errors import LLMError
from agrag.components.llm.sqlite_llm_cache import SqliteLLMCache, request_key

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a chat: ``role`` is ``system``, ``user`` or ``assistant``."""

    role: str
    content: str


def parse_json_object(answer: str) -> dict[str, Any]:
    """Parse an LLM answer that should be one JSON object; tolerates a Markdown code fence around it.

    Raises:
        LLMError: the answer is not a JSON object.
    """
    text = answer.strip()
    if fenced := _FENCE.match(text):
        text = fenced.group(1)
    if not text.startswith("{") and (start := text.find("{")) >= 0 and (end := text.rfind("}")) > start:
        text = text[start : end + 1]  # some models wrap the object in a sentence
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"{exc.msg} at {exc.pos}"
        raise LLMError(f"The LLM answered something that is not JSON ({problem}): {answer[:200]!r}") from exc
    if not isinstance(parsed, dict):
        raise LLMError(f"The LLM answered JSON that is not an object: {answer[:200]!r}")
    return parsed


class OpenAIChatClient:
    """Sends chats to an OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, vLLM, Ollama, LM Studio...).

    Timeouts and transient errors are retried by the ``openai`` library (``max_retries``, with backoff); anything
    still failing raises ``LLMError`` naming the endpoint. With a ``cache``, an answer already received for the same
    model and messages is returned without a call; ``calls`` and ``cache_hits`` count both kinds.

    Usage:
        ```python
        client = OpenAIChatClient("http://localhost:11434/v1", model="llama3.1", api_key=None)
        data = client.complete_json([ChatMessage("user", 'Answer {"ok": true}')])
        ```
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout_seconds: float = 120.0,
        max_retries: int = 3,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        cache: SqliteLLMCache | None = None,
    ) -> None:
        self.base_url = base_url
        self.model = model
        self.timeout_seconds = timeout_seconds
        self.max_retries = max_retries
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.cache = cache
        self.calls = 0
        self.cache_hits = 0
        self._count_lock = threading.Lock()
        import openai  # noqa: PLC0415 - here, the 0.25 s import is paid only by a process with an LLM configured

        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_seconds, max_retries=max_retries
        )
        self._api_error = openai.OpenAIError

    def limited(self, timeout_seconds: float, max_retries: int = 0) -> OpenAIChatClient:
        """A client of the same endpoint, model and cache that gives up sooner, for a step someone waits on.

        Its own ``calls`` and ``cache_hits`` start at zero.
        """
        clone = copy.copy(self)
        clone.timeout_seconds = timeout_seconds
        clone.max_retries = max_retries
        clone.calls = 0
        clone.cache_hits = 0
        clone._count_lock = threading.Lock()
        clone._client = self._client.with_options(timeout=timeout_seconds, max_retries=max_retries)
        return clone

    def complete(self, messages: Sequence[ChatMessage], *, json_output: bool = False) -> str:
        """Return the assistant's answer to ``messages``.

        Raises:
            LLMError: the endpoint failed after its retries, or answered no JSON or no text.
        """
        key = request_key(self.model, messages, json_output) if self.cache is not None else b""
        if self.cache is not None and (cached := self.cache.get(key)) is not None:
            with self._count_lock:
                self.cache_hits += 1
            return cached
        with self._count_lock:
            self.calls += 1
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_output else {}
        if self.max_tokens is not None:
            extra["max_tokens"] = self.max_tokens
        body = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": self.temperature,
            **extra,
        }
        try:
            # The client's documented raw ``post`` (its retries, timeouts and errors, without ``create``'s typed
            # request checks, which cost more than a local model's whole round trip).
            payload = self._client.post("/chat/completions", body=body, cast_to=object)
            content = _answer_text(json.loads(payload) if isinstance(payload, str) else payload)
        except self._api_error as exc:
            raise LLMError(f"The LLM at {self.base_url} (model {self.model!r}) failed: {exc}") from exc
        except ValueError as exc:
            raise LLMError(f"The LLM at {self.base_url} (model {self.model!r}) answered no JSON: {exc}") from exc
        if not content:
            raise LLMError(f"The LLM at {self.base_url} (model {self.model!r}) answered no text.")
        if self.cache is not None:
            self.cache.put(key, self.model, content)
        return content

    def is_cached(self, messages: Sequence[ChatMessage], *, json_output: bool = False) -> bool:
        """True when ``messages`` would be answered from the cache, without a call."""
        return self.cache is not None and request_key(self.model, messages, json_output) in self.cache

    def complete_json(self, messages: Sequence[ChatMessage]) -> dict[str, Any]:
        """Return the answer parsed as one JSON object (see ``parse_json_object``)."""
        return parse_json_object(self.complete(messages, json_output=True))


def _answer_text(payload: Any) -> str | None:
    """The first choice's message text of a chat completion body, or None when it has none."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else None
