"""Re-extraction honours ``ingest.finalize=manual``: it leaves communities stale for ``agrag finalize``, and says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.flows.finalize_flow import finalize_into
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.reextract_flow import DEFERRED, reextract_into
from agrag.flows.reextract_report import ReextractStatus, report_lines
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES


@pytest.mark.slow
def test_a_manual_finalize_policy_defers_the_communities_of_a_re_extraction(
    prefect_harness: None, tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = tmp_path / "notes"
    shutil.copytree(EXAMPLES, folder)
    config = load_config(["ingest.finalize=manual"])
    settings = AgragSettings(data_dir=tmp_path / "data", _env_file=None)  # type: ignore[call-arg]
    with open_knowledge_store(settings, config.vector_store, embedder) as store:
        ingest_into(str(folder), config, store, embedder)
        assert store.counts()["Community"] == 0
        team = next(d.id for d in store.graph.documents(None, limit=100) if d.source_path == "team.md")

        report = reextract_into([team], config, store, embedder, force=True)

        assert [o.status for o in report.documents] == [ReextractStatus.REEXTRACTED]
        assert report_lines(report)[-1] == DEFERRED and not report.communities_by_level
        assert store.counts()["Community"] == 0
        assert finalize_into(config, store, embedder).finalized and store.counts()["Community"] > 0
