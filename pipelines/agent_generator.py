"""The chat generator of the built-in agent: Haystack's OpenAI-compatible generator on the runtime's LLM endpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING

from haystack.utils import Secret

from agrag.components.errors import AgentLLMNotConfiguredError

if TYPE_CHECKING:
    from haystack.components.generators.chat import OpenAIChatGenerator

    from agrag.pipelines.runtime import Runtime

NO_API_KEY = "not-needed"  # local servers (Ollama, vLLM) take any key, and the OpenAI client insists on one


def agent_chat_generator(runtime: Runtime, timeout_seconds: float | None = None) -> OpenAIChatGenerator:
    """A tool-calling chat generator on the endpoint of ``runtime.llm`` (``AGRAG_LLM_*``), temperature 0.

    Each call times out after ``AGRAG_LLM_TIMEOUT_SECONDS`` (or ``timeout_seconds``, if shorter) and is retried
    ``AGRAG_LLM_MAX_RETRIES`` times with backoff by the OpenAI client.

    Raises:
        AgentLLMNotConfiguredError: no LLM endpoint is configured.
    """
    llm = runtime.llm
    if llm is None:
        raise AgentLLMNotConfiguredError()
    # Imports openai (0.4 s): only where an LLM is configured, not in every `agrag serve` start.
    from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: PLC0415

    settings = runtime.settings.agrag
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else NO_API_KEY
    timeout = (
        settings.llm_timeout_seconds if timeout_seconds is None else min(timeout_seconds, settings.llm_timeout_seconds)
    )
    return OpenAIChatGenerator(
        api_key=Secret.from_token(key),
        model=llm.model,
        api_base_url=llm.base_url,
        timeout=timeout,
        max_retries=settings.llm_max_retries,
        generation_kwargs={"temperature": 0.0},
    )
