"""Per-file plans, their limits, the plan stored with each document, and the manual finalize policy, through the
real ingest flow on a copy of the example corpus (Kùzu and Qdrant Edge in tmp_path)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.ingestion_run import StageState
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import IngestInterruptedError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows import community_tasks
from agrag.flows.finalize_flow import NOTHING_STALE, finalize_into
from agrag.flows.ingest_control import IngestControl
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.ingest_report import FAILED, IngestReport
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow

MD_FIXED_CSV = [
    'ingest.plan.rules=[{match: "*.md", chunker: structural}, '
    '{match: "*.csv", chunker: fixed, chunker_options: {table_max_rows: 2}}]'
]
CSV_ROWS = 3  # data rows of examples/acme_notes/sites.csv


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    shutil.copytree(EXAMPLES, folder)
    return folder


@pytest.fixture
def store(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[KnowledgeStore]:
    opened = open_knowledge_store(AgragSettings(data_dir=tmp_path / "data"), load_config().vector_store, embedder)
    yield opened
    opened.close()


def _statuses(report: IngestReport) -> dict[str, tuple[str, str, str]]:
    return {f.source_path: (f.status, f.plan, f.reason) for f in report.files}


def test_rules_pick_each_files_chunker_and_the_plan_is_stored(
    prefect_harness: None, corpus: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    report = ingest_into(str(corpus), load_config(MD_FIXED_CSV), store, embedder)
    files = _statuses(report)
    assert files["sites.csv"] == ("ingested", "rule 2 (*.csv): fixed chunker, lexical extractor", "")
    assert files["team.md"][1] == "rule 1 (*.md): structural chunker, lexical extractor"
    assert files["runbook.rst"][1] == "defaults: structural chunker, lexical extractor"

    stored = {d.source_path: d for d in store.graph.documents(None)}
    csv = stored["sites.csv"]
    assert csv.plan is not None and (csv.plan.rule, csv.plan.match, csv.plan.chunker) == (2, "*.csv", "fixed")
    assert csv.plan.chunker_options["table_max_rows"] == 2 and csv.plan.chunker_options["kind"] == "fixed"
    assert csv.chunks == -(-CSV_ROWS // 2), "the csv table is cut by the rule's table_max_rows"
    md_plans = {path: d.plan for path, d in stored.items() if path.endswith(".md")}
    assert md_plans and all(p is not None and p.rule == 1 and p.chunker == "structural" for p in md_plans.values())
    others = [d.plan for path, d in stored.items() if not path.endswith((".md", ".csv"))]
    assert others and all(p is not None and p.rule is None for p in others)


def test_a_disallowed_extractor_is_replaced_and_the_report_says_why(
    prefect_harness: None, corpus: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    config = load_config(
        ['ingest.plan.rules=[{match: "*.csv", extractor: llm}]', "ingest.plan.limits.extractors=[lexical]"]
    )
    report = ingest_into(str(corpus), config, store, embedder)  # no LLM: the replaced rule needs none
    why = "extractor llm is not allowed by ingest.plan.limits.extractors (lexical); used lexical"
    assert _statuses(report)["sites.csv"] == ("ingested", "rule 1 (*.csv): structural chunker, lexical extractor", why)
    stored = {d.source_path: d for d in store.graph.documents(None)}
    plan = stored["sites.csv"].plan
    assert plan is not None and plan.extractor == "lexical" and plan.reasons == (why,)
    assert all(f.reason == "" for f in report.files if f.source_path != "sites.csv")


def test_a_changed_rule_redoes_only_the_files_it_matches(
    prefect_harness: None, corpus: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    # a run stopped after chunking: its chunk work is journaled per document under each plan's hash
    def stop_after_chunk(name: str, state: StageState, line: str) -> None:
        if name == "chunk" and state is StageState.COMPLETED:
            control.cancel("stop after chunking")

    control = IngestControl(stop_after_chunk)
    with pytest.raises(IngestInterruptedError):
        ingest_into(str(corpus), load_config(MD_FIXED_CSV), store, embedder, control=control)

    changed_csv_rule = [MD_FIXED_CSV[0].replace("table_max_rows: 2", "table_max_rows: 3")]
    resumed = ingest_into(str(corpus), load_config(changed_csv_rule), store, embedder)
    assert resumed.documents_ingested == 9
    assert resumed.documents_resumed["chunk"] == 8, "every file but the csv reuses its journaled chunks"
    csv = {d.source_path: d for d in store.graph.documents(None)}["sites.csv"]
    assert csv.chunks == CSV_ROWS // 3 and csv.plan is not None and csv.plan.chunker_options["table_max_rows"] == 3

    # an unchanged corpus under a changed rule: only the files the rule decides were ingested with other settings
    again = ingest_into(str(corpus), load_config(MD_FIXED_CSV), store, embedder)
    assert (again.documents_ingested, again.other_settings) == (0, ("sites.csv",))
    same = ingest_into(str(corpus), load_config(changed_csv_rule), store, embedder)
    assert same.other_settings == ()


def test_a_file_over_max_chunks_per_file_is_refused_and_its_old_version_stays(
    prefect_harness: None, corpus: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    first = ingest_into(str(corpus), load_config(), store, embedder)
    chunks = {d.source_path: d.chunks for d in store.graph.documents(None)}
    largest = max(chunks, key=lambda path: chunks[path])
    limit = sorted(chunks.values())[-2]  # every file but the largest fits
    assert chunks[largest] > limit
    big = corpus / largest
    big.write_text(big.read_text(encoding="utf-8") + "\n\nOne more line about Orion and Vega.\n", encoding="utf-8")
    small = corpus / "glossary.txt"
    small.write_text(small.read_text(encoding="utf-8") + "\nZeta: one more term.\n", encoding="utf-8")

    report = ingest_into(str(corpus), load_config([f"ingest.plan.limits.max_chunks_per_file={limit}"]), store, embedder)
    status, _, reason = _statuses(report)[largest]
    assert status == FAILED and f"ingest.plan.limits.max_chunks_per_file={limit}" in reason
    assert [f.source_path for f in report.failures] == [largest]
    assert report.documents_ingested == 1 and _statuses(report)["glossary.txt"][0] == "ingested"
    stored = {d.source_path: d for d in store.graph.documents(None)}
    assert stored[largest].chunks == chunks[largest], "the stored version of the refused file stays current"
    assert report.counts["Document"] == first.counts["Document"]


def test_manual_finalize_defers_communities_until_finalize(
    prefect_harness: None, corpus: Path, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    config = load_config(["ingest.finalize=manual"])
    md = ingest_into(str(corpus), config, store, embedder, files=["team.md", "incidents.md"])
    rest = ingest_into(str(corpus), config, store, embedder)
    for report in (md, rest):
        assert report.communities_deferred and "communities" not in report.stage_seconds
    assert rest.counts["Community"] == 0 and rest.counts["Entity"] > 20
    assert store.journal is not None and community_tasks.stale_communities(store.journal)

    done = finalize_into(config, store, embedder)
    assert done.finalized and done.communities_by_level and sum(done.communities_by_level.values()) >= 2
    counts = store.counts()
    assert counts["Community"] == counts["community_vectors"] == sum(done.communities_by_level.values())
    assert community_tasks.stale_communities(store.journal) is None

    nothing = finalize_into(config, store, embedder)
    assert (nothing.finalized, nothing.message) == (False, NOTHING_STALE)
    assert store.counts()["Community"] == counts["Community"]
