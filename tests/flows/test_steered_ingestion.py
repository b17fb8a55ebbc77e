"""Issue 18's acceptance walk on the example corpus, as an operator or an agent steers it.

Preview the files; declare a label and a pattern; ingest with per-file rules (``*.md`` structural, ``*.csv`` fixed)
through the LLM extractor (the scripted LLM of ``tests/support/example_llm.py``, which also answers a ``Date`` label
and a ``MENTORS`` relation the engineering ontology lacks); read the pruned report's hint; grow the ontology with the
hint's own arguments; re-extract only the documents the hint names. The pruned relation and label are then in the
graph, every evidence id fetched before fetches the same text, and no other document was sent to the LLM again.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.ontology_additions import LabelSpec, RelationSpec
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.loaders.file_preview import preview_files
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.reextract_flow import reextract_into
from agrag.flows.reextract_report import ReextractStatus
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.ontology_in_force import add_to_ontology
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES
from tests.flows.test_reextract import evidence_texts, extraction_prompts, links_by_document, relation_types
from tests.support import example_llm
from tests.support.scripted_llm import ScriptedLLM, scripted_llm
from tests.support.store_dump import dump

CONFIG = [
    "ingest/extractor=llm",
    "ingest/ontology=engineering",
    'ingest.plan.rules=[{match: "*.md", chunker: structural}, {match: "*.csv", chunker: fixed}]',
]


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm(example_llm.answer) as server:
        yield server


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A files root holding a copy of the example corpus."""
    shutil.copytree(EXAMPLES, tmp_path / "root" / "acme_notes")
    return tmp_path / "root"


@pytest.fixture
def store(tmp_path: Path, root: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[KnowledgeStore]:
    settings = AgragSettings(data_dir=tmp_path / "data", files_root=root, _env_file=None)  # type: ignore[call-arg]
    opened = open_knowledge_store(settings, load_config().vector_store, embedder)
    yield opened
    opened.close()


def chunk_prompts_of(prompts: list[str], store: KnowledgeStore) -> set[str]:
    """The documents whose chunks the extraction prompts carry (by each chunk's text)."""
    owners: set[str] = set()
    for document in store.graph.documents(None, limit=100):
        texts = [c.text for c in store.graph.get_chunks(store.graph.document_chunk_ids(document.id)) if c.searchable]
        if any(text in prompt for text in texts for prompt in prompts):
            owners.add(document.id)
    return owners


@pytest.mark.slow
def test_preview_declare_ingest_by_rule_then_re_extract_what_the_grown_ontology_keeps(
    prefect_harness: None,
    llm: ScriptedLLM,
    root: Path,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
) -> None:
    client = OpenAIChatClient(llm.base_url, "scripted", max_retries=0)
    config = load_config(CONFIG)
    suffixes = config.ingest.loader.suffixes

    # 1. preview: a bounded sample of every Markdown file, one page
    page = preview_files(["acme_notes/*.md"], root, suffixes, limit=20, chars=300)
    assert page.total == len(list((root / "acme_notes").glob("*.md"))) and page.next_offset is None
    assert all(0 < len(f.sample) <= 300 for f in page.files)

    # 2. declare what the corpus needs before ingesting: a label and a pattern
    first = add_to_ontology(
        config,
        store,
        [LabelSpec(label="Vendor", description="A company that sells us parts or services")],
        [RelationSpec(type="SUPPLIES", source="Vendor", target="Component")],
    )
    assert {r.status.value for r in first.results} == {"added"}

    # 3. ingest the folder: *.md by the structural rule, *.csv by the fixed one, the rest by the defaults
    report = ingest_into(str(root / "acme_notes"), config, store, embedder, llm=client, files_root=root)
    plans = {f.source_path: f.plan for f in report.files}
    assert plans["team.md"].startswith("rule 1 (*.md): structural chunker")
    assert plans["sites.csv"].startswith("rule 2 (*.csv): fixed chunker")
    assert plans["runbook.rst"].startswith("defaults: structural chunker")
    hint = report.pruned.hint
    assert hint is not None
    assert hint.command == "agrag ontology add --label Date --relation MENTORS:Person:Person"
    documents = {d.source_path: d.id for d in store.graph.documents(None, limit=100)}
    assert documents["team.md"] in hint.documents
    assert len(hint.documents) < len(documents), "only the documents something was dropped from"
    assert hint.reextract == "agrag reextract " + " ".join(hint.documents)
    assert "MENTORS" not in relation_types(store)

    before_evidence = evidence_texts(store, embedder)
    before_links = links_by_document(store)
    before_chunks = store.counts()["Chunk"]

    # 4. grow the ontology with the hint's own arguments, then re-extract the documents it names
    arguments = json.loads(hint.arguments)
    add_to_ontology(
        config,
        store,
        [LabelSpec(**label) for label in arguments["labels"]],
        [RelationSpec(**relation) for relation in arguments["relations"]],
    )
    since = len(llm.requests)
    again = reextract_into(list(hint.documents), config, store, embedder, llm=client)

    assert {o.document_id: o.status for o in again.documents} == dict.fromkeys(
        hint.documents, ReextractStatus.REEXTRACTED
    )
    assert chunk_prompts_of(extraction_prompts(llm, since), store) == set(hint.documents)
    assert relation_types(store)["MENTORS"] == 1
    assert any(row[2] == "Date" for row in dump(store)["entities"]), "the Date label is kept now"
    assert evidence_texts(store, embedder) == before_evidence
    assert store.counts()["Chunk"] == before_chunks
    after_links = links_by_document(store)
    untouched = set(documents.values()) - set(hint.documents)
    assert untouched and all(after_links[d] == before_links[d] for d in untouched)
