from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES


@pytest.fixture(scope="module")
def example_store(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Iterator[KnowledgeStore]:
    """The example corpus ingested once per module (the ingestion tasks run under the Prefect harness)."""
    data_dir: Path = tmp_path_factory.mktemp("data")
    config = load_config()
    store = open_knowledge_store(AgragSettings(data_dir=data_dir), config.vector_store, embedder)
    ingest_into(str(EXAMPLES), config, store, embedder)
    yield store
    store.close()
