"""``OpenAIChatClientSpec``: the settings of an ``OpenAIChatClient``, serializable, with the API key as an env var."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.utils import Secret

from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.llm.sqlite_llm_cache import SqliteLLMCache

API_KEY_VARIABLE = "AGRAG_LLM_API_KEY"


@dataclass(frozen=True, slots=True)
class OpenAIChatClientSpec:
    """What a component that calls an LLM writes into a pipeline YAML instead of its client, and opens one from.

    The API key is never written: ``api_key`` names the environment variable it is read from when the client is
    opened (``AGRAG_LLM_API_KEY`` by default, where agrag's own client reads it).

    Usage:
        ```python
        spec = OpenAIChatClientSpec.of(client)
        same = OpenAIChatClientSpec.from_dict(spec.to_dict()).open()
        ```
    """

    base_url: str
    model: str
    api_key: Secret | None = None
    timeout_seconds: float = 120.0
    max_retries: int = 3
    temperature: float = 0.0
    max_tokens: int | None = None
    cache_path: str | None = None

    @classmethod
    def of(cls, client: OpenAIChatClient, api_key_variable: str = API_KEY_VARIABLE) -> OpenAIChatClientSpec:
        """The settings of ``client``; its key is referred to by ``api_key_variable``, whatever its value."""
        return cls(
            base_url=client.base_url,
            model=client.model,
            api_key=Secret.from_env_var(api_key_variable, strict=False),
            timeout_seconds=client.timeout_seconds,
            max_retries=client.max_retries,
            temperature=client.temperature,
            max_tokens=client.max_tokens,
            cache_path=str(client.cache.path) if client.cache is not None else None,
        )

    def open(self) -> OpenAIChatClient:
        """A client with these settings, its key read from the environment now."""
        key = self.api_key.resolve_value() if self.api_key is not None else None
        return OpenAIChatClient(
            self.base_url,
            self.model,
            key if isinstance(key, str) else None,
            timeout_seconds=self.timeout_seconds,
            max_retries=self.max_retries,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            cache=SqliteLLMCache(Path(self.cache_path)) if self.cache_path is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """Serialize the Haystack way (the key as its environment variable's name)."""
        return default_to_dict(
            self,
            base_url=self.base_url,
            model=self.model,
            api_key=self.api_key,
            timeout_seconds=self.timeout_seconds,
            max_retries=self.max_retries,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            cache_path=self.cache_path,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OpenAIChatClientSpec:
        """Deserialize a spec written by ``to_dict``."""
        return default_from_dict(cls, data)
