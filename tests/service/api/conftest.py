from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from tests.service.conftest import copy_corpus, settings_of
from tests.support.served_api import uvicorn_in_thread

ADMIN = "admin-token-0123456789abcdef"
TEAM = "team-token-0123456789abcdef0"
OWNER = "owner-token-0123456789abcdef"
READABLE = ("team.md", "sites.csv")
SCOPE = tuple(document_id_for(name, "acme_notes") for name in READABLE)


@dataclass
class Served:
    """The API on a real uvicorn server over a copy of the example corpus, and its tokens."""

    url: str
    runtime: Runtime

    def client(self, token: str | None = ADMIN) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


@pytest.fixture(scope="module")
def served_runtime(
    ingested_corpus: Path, tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder
) -> Iterator[Runtime]:
    """The runtime of a private copy of the example corpus, open for the module."""
    data_dir = copy_corpus(ingested_corpus, tmp_path_factory.mktemp("served"))
    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        yield runtime


@pytest.fixture(scope="module")
def served(served_runtime: Runtime) -> Iterator[Served]:
    """The API with an admin token, a token scoped to team.md and sites.csv, and the owner token."""
    access = AccessPolicy([ApiToken("admin", ADMIN), ApiToken("team", TEAM, SCOPE)], OWNER)
    with uvicorn_in_thread(create_app(served_runtime, access)) as url:
        yield Served(url, served_runtime)
