from pathlib import Path

import pytest

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.runtime import open_runtime
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings
from tests.conftest import EXAMPLES
from tests.support.data_dir_copy import copy_data_dir


def settings_of(data_dir: Path) -> Settings:
    """Settings of a data dir, nothing else set (tokens, roots and LLM come from the test)."""
    return Settings(AgragSettings(data_dir=data_dir, _env_file=None), RetrievalSettings(_env_file=None))  # type: ignore[call-arg]


@pytest.fixture(scope="session")
def ingested_corpus(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Path:
    """A data dir holding the example corpus, ingested once per session; copy it (``copy_corpus``) to use it."""
    data_dir = tmp_path_factory.mktemp("corpus") / "data"
    with open_runtime([], settings_of(data_dir), require_data=False, embedder=embedder) as runtime:
        ingest_into(str(EXAMPLES), runtime.config, runtime.store, embedder)
    return data_dir


def copy_corpus(corpus: Path, into: Path) -> Path:
    """A private copy of the ingested data dir (its stores are closed, so the files copy whole)."""
    target = into / "data"
    copy_data_dir(corpus, target)
    return target
