"""Community reports written in batches of members equal the reports written in one call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agrag.components.data_models.community import Community
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.flows import community_tasks
from agrag.flows.community_tasks import report_batches, write_reports
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES


def _community(cid: str, level: int, members: str, parent: str | None = None) -> Community:
    return Community(cid, level, tuple(members), parent)


def test_batches_hold_each_part_of_the_hierarchy_together_and_stay_under_the_member_limit() -> None:
    every = [
        _community("a", 0, "pqrs"),
        _community("a1", 1, "pq", "a"),
        _community("a2", 1, "rs", "a"),
        _community("b", 0, "tuvwxyz"),
        _community("b1", 1, "tuv", "b"),
        _community("c", 0, "kl"),
    ]
    batches = report_batches(every, every, members=5)

    assert [[c.id for c in batch] for batch in batches] == [["a", "a1", "a2"], ["b", "b1"], ["c"]]
    assert sorted(c.id for batch in batches for c in batch) == sorted(c.id for c in every), "each exactly once"
    # a refresh of a few communities still groups them by their top-level ancestor
    assert [[c.id for c in b] for b in report_batches([every[4], every[2], every[1]], every, members=3)] == [
        ["a1"],
        ["a2"],
        ["b1"],
    ]


@pytest.mark.slow
def test_reports_written_in_small_batches_equal_the_reports_of_one_call(
    prefect_harness: None, tmp_path: Path, embedder: SentenceTransformersTextEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config()
    settings = AgragSettings(data_dir=tmp_path / "data", _env_file=None)
    with open_knowledge_store(settings, config.vector_store, embedder) as store:
        ingest_into(str(EXAMPLES), config, store, embedder)
        whole = {c.id: c for c in store.graph.communities()}  # the ingestion wrote them in one batch
        assert len(whole) >= 4 and all(c.report is not None for c in whole.values())
        members = len({e for c in whole.values() for e in c.entity_ids})

        reads: list[int] = []
        read = store.graph.community_inputs

        def counted(ids: list[str], among: list[str] | None) -> Any:
            reads.append(len(ids))
            return read(ids, among)

        monkeypatch.setattr(store.graph, "community_inputs", counted)
        monkeypatch.setattr(community_tasks, "REPORT_BATCH_MEMBERS", max(2, members // 4))
        bare = [Community(c.id, c.level, c.entity_ids, c.parent_id) for c in whole.values()]
        everyone = frozenset(e for c in bare for e in c.entity_ids)  # every member touched: nothing is reused
        write_reports.fn(store, bare, config.ingest.communities, None, embedder, touched=everyone)
        batched = {c.id: c for c in store.graph.communities()}

    assert len(reads) >= 3 and max(reads) < members, "the inputs were read a part at a time"
    assert batched == whole, "titles, summaries, findings and ratings (rated on one scale) are the same"
    assert max(c.report.rating for c in batched.values() if c.report) == 10.0
