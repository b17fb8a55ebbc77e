"""Fixtures of the agent tests: an ingested copy of the example corpus, and a runtime on it with a scripted LLM."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings
from tests.service.conftest import copy_corpus
from tests.support.scripted_tool_llm import Call, Reply, tool_results

QUESTION = "Who owns the Orion Planner?"
OpenAgentRuntime = Callable[..., Any]


def answering(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
    """A model that searches once, fetches the first hit and answers citing it."""
    results = tool_results(messages)
    if not results:
        return Reply(calls=(Call("search_evidence", {"query": QUESTION, "limit": 3}),))
    first = results[0]["hits"][0]["id"]
    if len(results) == 1:
        return Reply(calls=(Call("fetch_evidence", {"ids": [first]}),))
    return Reply(text=f"Maria Chen owns the Orion Planner [{first}].")


@pytest.fixture(scope="module")
def agent_data_dir(ingested_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the ingested example corpus for this module's agent runs."""
    return copy_corpus(ingested_corpus, tmp_path_factory.mktemp("agent"))


def agent_settings(data_dir: Path, base_url: str | None, **agrag: Any) -> Settings:
    """Settings of ``data_dir`` with the LLM at ``base_url``, fast retries, and any other ``AGRAG_*`` values."""
    values: dict[str, Any] = {"llm_timeout_seconds": 5.0, "llm_max_retries": 2, **agrag}
    return Settings(
        AgragSettings(data_dir=data_dir, llm_base_url=base_url, _env_file=None, **values),  # type: ignore[call-arg]
        RetrievalSettings(_env_file=None),  # type: ignore[call-arg]
    )


@pytest.fixture
def agent_runtime(agent_data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> Callable[..., Any]:
    """Open the corpus with the LLM at ``base_url`` and the given settings: ``with agent_runtime(url) as runtime``."""

    @contextmanager
    def opened(base_url: str | None, **agrag: Any) -> Iterator[Runtime]:
        with open_runtime([], agent_settings(agent_data_dir, base_url, **agrag), embedder=embedder) as runtime:
            yield runtime

    return opened
