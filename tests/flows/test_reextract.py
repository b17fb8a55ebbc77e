"""Re-extraction in place on the example corpus, with the scripted LLM: one document, its chunks and evidence ids kept.

The corpus is ingested once with the LLM extractor and the engineering ontology, which prunes the ``MENTORS``
relation of ``team.md``; then the ontology is given that pattern and only ``team.md`` is extracted again.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import UnknownDocumentIdError
from agrag.components.extractors.reextract_errors import ReextractRequestError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.reextract_flow import reextract_into, run_reextract
from agrag.flows.reextract_report import ReextractStatus
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.evidence_session import EvidenceSession
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES
from tests.flows.test_resumable_ingest import subprocess_env
from tests.support import example_llm
from tests.support.data_dir_copy import copy_data_dir
from tests.support.scripted_llm import ScriptedLLM, scripted_llm
from tests.support.store_dump import dump

BASE = ["ingest/extractor=llm", "ingest/ontology=engineering", "ingest.extractor.concurrency=2"]
MENTORS = "+ingest.ontology.relation_types.MENTORS=[[Person,Person]]"
WITH_MENTORS = [*BASE, MENTORS]


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm(example_llm.answer) as server:
        yield server


def client(server: ScriptedLLM) -> OpenAIChatClient:
    return OpenAIChatClient(server.base_url, "scripted", max_retries=0)


def open_store(data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> KnowledgeStore:
    return open_knowledge_store(AgragSettings(data_dir=data_dir, _env_file=None), load_config().vector_store, embedder)


@pytest.fixture(scope="module")
def ingested(
    prefect_harness: None,
    llm: ScriptedLLM,
    embedder: SentenceTransformersTextEmbedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """The example corpus ingested with the LLM extractor and the engineering ontology (MENTORS is pruned)."""
    data_dir = tmp_path_factory.mktemp("ingested") / "data"
    with open_store(data_dir, embedder) as store:
        report = ingest_into(str(EXAMPLES), load_config(BASE), store, embedder, llm=client(llm))
    assert ("MENTORS", "Person", "Person") in [
        (p.type, p.source_label, p.target_label) for p in report.pruned.undeclared_patterns
    ]
    return data_dir


def copied(ingested: Path, into: Path) -> Path:
    target = into / "data"
    copy_data_dir(ingested, target)
    return target


def document_id(store: KnowledgeStore, name: str) -> str:
    (found,) = [d for d in store.graph.documents(None, limit=100) if d.source_path == name]
    return found.id


def extraction_prompts(server: ScriptedLLM, since: int) -> list[str]:
    return [
        r["messages"][1]["content"]
        for r in server.requests[since:]
        if "knowledge graph from documents" in r["messages"][0]["content"]
    ]


def evidence_texts(store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder) -> dict[str, str]:
    """Every current chunk's evidence id and the text it fetches."""
    ids = [
        f"{d.id}.{d.version}.c{c.order}"
        for d in store.graph.documents(None, limit=100)
        for c in store.graph.get_chunks(store.graph.document_chunk_ids(d.id, d.version))
    ]
    fetched = EvidenceSession(store, embedder).fetch(ids)
    assert not fetched.not_found
    return {item.id: item.text for item in fetched.items}


def links_by_document(store: KnowledgeStore) -> dict[str, tuple[int, int, int]]:
    """Per document: its mentions, about links, and relation supports (graph rows counted by document)."""
    out: dict[str, list[int]] = {}
    graph = store.graph
    for document in graph.documents(None, limit=100):
        chunk_ids = set(graph.document_chunk_ids(document.id, document.version))
        mentions = [r for r in dump(store)["mentions"] if r[0] in chunk_ids]
        about = [r for r in dump(store)["about"] if r[0] in chunk_ids]
        support = [c for r in dump(store)["relations"] for c in r[5] if c in chunk_ids]
        out[document.id] = [len(mentions), len(about), len(support)]
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def relation_types(store: KnowledgeStore) -> Counter[str]:
    return Counter(row[3] for row in dump(store)["relations"])


@pytest.mark.slow
def test_reextracting_one_document_keeps_its_chunks_and_adds_what_the_ontology_now_allows(
    ingested: Path, llm: ScriptedLLM, embedder: SentenceTransformersTextEmbedder, tmp_path: Path
) -> None:
    with open_store(copied(ingested, tmp_path), embedder) as store:
        team = document_id(store, "team.md")
        before_evidence = evidence_texts(store, embedder)
        before_links = links_by_document(store)
        before_counts = store.counts()
        assert "MENTORS" not in relation_types(store)
        team_chunks = {c.text for c in store.graph.get_chunks(store.graph.document_chunk_ids(team)) if c.searchable}
        since = len(llm.requests)

        report = reextract_into([team], load_config(WITH_MENTORS), store, embedder, llm=client(llm))

        (outcome,) = report.documents
        assert outcome.status == ReextractStatus.REEXTRACTED and outcome.chunks > 0
        prompts = extraction_prompts(llm, since)
        assert prompts, "the new ontology changes the prompt: team.md is asked again"
        assert all(any(text in prompt for text in team_chunks) for prompt in prompts), "only team.md's chunks"
        assert relation_types(store)["MENTORS"] >= 1, "the relation pruned before is in the graph now"
        mentors = [r for r in dump(store)["relations"] if r[3] == "MENTORS"]
        assert {e.name for e in store.graph.get_entities([mentors[0][1], mentors[0][2]])} == {
            "Lena Brandt",
            "Maria Chen",
        }
        assert evidence_texts(store, embedder) == before_evidence, "every evidence id fetches the same text"
        after_links = links_by_document(store)
        assert {k: v for k, v in after_links.items() if k != team} == {
            k: v for k, v in before_links.items() if k != team
        }, "other documents' mentions and relation support are unchanged"
        after = store.counts()
        assert after["Chunk"] == before_counts["Chunk"] and after["chunk_vectors"] == before_counts["chunk_vectors"]
        assert after["RELATED"] == before_counts["RELATED"] + 1
        assert after["Entity"] == before_counts["Entity"] and outcome.entities_new == 0
        assert store.graph.document_config_hashes([team])[team] == report.config_hash
        assert report.communities_by_level, "the touched communities were refreshed"
        merged = {
            frozenset((e.member_name, e.resolved_name)) for e in store.graph.merge_log() if e.decision == "merged"
        }
        assert frozenset(("SLAM", "Simultaneous Localization and Mapping")) in merged

        since = len(llm.requests)
        again = reextract_into([team], load_config(WITH_MENTORS), store, embedder, llm=client(llm))
        assert [d.status for d in again.documents] == [ReextractStatus.UNCHANGED]
        assert len(llm.requests) == since and again.llm_calls == 0, "an unchanged document costs no LLM call"


@pytest.mark.slow
def test_an_undone_merge_stays_undone_and_a_kept_merge_is_not_logged_twice(
    ingested: Path, llm: ScriptedLLM, embedder: SentenceTransformersTextEmbedder, tmp_path: Path
) -> None:
    with open_store(copied(ingested, tmp_path), embedder) as store:
        merges = [e for e in store.graph.merge_log() if e.decision == "merged"]
        slam = next(
            e for e in merges if {e.member_name, e.resolved_name} == {"SLAM", "Simultaneous Localization and Mapping"}
        )
        ros = next(e for e in merges if {e.member_name, e.resolved_name} == {"ROS", "Robot Operating System"})
        store.undo_merge(ros.id)
        logged = len(store.graph.merge_log())
        ids = [d.id for d in store.graph.documents(None, limit=100)]

        report = reextract_into(ids, load_config(BASE), store, embedder, llm=client(llm), force=True)

        assert {d.status for d in report.documents} == {ReextractStatus.REEXTRACTED}
        assert len(store.graph.merge_log()) == logged, "no decision about a stored entity is logged again"
        assert store.graph.resolved_ids([slam.member_id]) == {slam.member_id: slam.resolved_id}, "the merge stands"
        assert store.graph.resolved_ids([ros.member_id]) == {ros.member_id: ros.member_id}, "the undo stands"


@pytest.mark.slow
def test_unknown_ids_are_refused_before_any_work(
    ingested: Path, llm: ScriptedLLM, embedder: SentenceTransformersTextEmbedder, tmp_path: Path
) -> None:
    with open_store(copied(ingested, tmp_path), embedder) as store:
        team = document_id(store, "team.md")
        before = dump(store)
        since = len(llm.requests)
        with pytest.raises(UnknownDocumentIdError, match="no-such-doc"):
            reextract_into([team, "no-such-doc"], load_config(WITH_MENTORS), store, embedder, llm=client(llm))
        assert len(llm.requests) == since and dump(store) == before


@pytest.mark.slow
def test_the_flow_reextracts_documents_of_other_settings_and_reports_each(
    ingested: Path, llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = copied(ingested, tmp_path)
    monkeypatch.setenv("AGRAG_LLM_BASE_URL", llm.base_url)
    with pytest.raises(ReextractRequestError, match="no document was named"):
        run_reextract(None, WITH_MENTORS, data_dir=str(data_dir))

    report = run_reextract(None, WITH_MENTORS, other_settings=True, data_dir=str(data_dir))

    assert len(report.documents) == 9
    assert {d.status for d in report.documents} == {ReextractStatus.REEXTRACTED}
    again = run_reextract(None, WITH_MENTORS, other_settings=True, data_dir=str(data_dir))
    assert again.documents == () and again.llm_calls == 0


# kill -9 during a re-extraction of every document, then the same command again: the graph of an uninterrupted run

REPO = Path(__file__).resolve().parents[2]
AGRAG = str(Path(sys.executable).with_name("agrag"))


@pytest.fixture(scope="module")
def uninterrupted(
    ingested: Path,
    llm: ScriptedLLM,
    embedder: SentenceTransformersTextEmbedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    """The store after an uninterrupted re-extraction of every document under the new ontology (on a fresh copy)."""
    data_dir = copied(ingested, tmp_path_factory.mktemp("uninterrupted"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGRAG_LLM_BASE_URL", llm.base_url)
        report = run_reextract(None, WITH_MENTORS, other_settings=True, data_dir=str(data_dir))
    assert len(report.with_status(ReextractStatus.REEXTRACTED)) == 9
    with open_store(data_dir, embedder) as store:
        return dump(store)


def _kill_while_the_llm_holds_a_request(llm: ScriptedLLM, data_dir: Path, seed: int) -> None:
    """A real ``agrag reextract`` killed with SIGKILL while a request is in flight, after some documents are done."""
    llm.release.clear()
    llm.hold_after_answers(random.Random(seed).randrange(6, 40))
    process = subprocess.Popen(
        [AGRAG, "reextract", "--other-settings", *WITH_MENTORS],
        env=subprocess_env(llm, data_dir),
        cwd=data_dir.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        while llm.held < 1:
            assert process.poll() is None, f"it ended before the kill (seed {seed}): {process.stdout.read()}"  # type: ignore[union-attr]
            assert time.monotonic() < deadline, f"no request was held (seed {seed})"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        llm.hold_after = None
        llm.held = 0
        llm.release.set()
    assert process.returncode == -signal.SIGKILL


def _die_during_the_write(llm: ScriptedLLM, data_dir: Path, step: str) -> None:
    """``agrag reextract`` killing itself (SIGKILL) right after a write statement of the ``step``-th document write."""
    killed = subprocess.run(
        [sys.executable, "-m", "tests.support.die_during_write", step, "reextract", "--other-settings", *WITH_MENTORS],
        env=subprocess_env(llm, data_dir),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, f"{step}: {killed.stdout}\n{killed.stderr}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "kill", ["held-llm-request", "unlink_chunks:3", "drop_unnamed_entities:5", "set_config_hashes:2"]
)
def test_a_killed_reextraction_run_again_ends_with_the_graph_of_an_uninterrupted_one(  # noqa: PLR0917
    ingested: Path,
    llm: ScriptedLLM,
    embedder: SentenceTransformersTextEmbedder,
    uninterrupted: dict[str, Any],
    tmp_path: Path,
    kill: str,
) -> None:
    data_dir = copied(ingested, tmp_path)
    if kill == "held-llm-request":
        _kill_while_the_llm_holds_a_request(llm, data_dir, random.randrange(10_000))
    else:
        _die_during_the_write(llm, data_dir, kill)
    with open_store(data_dir, embedder) as store:
        assert dump(store) != uninterrupted, "the kill left the re-extraction unfinished"

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGRAG_LLM_BASE_URL", llm.base_url)
        report = run_reextract(None, WITH_MENTORS, other_settings=True, data_dir=str(data_dir))

    assert {d.status for d in report.documents} <= {ReextractStatus.REEXTRACTED}
    with open_store(data_dir, embedder) as store:
        assert dump(store) == uninterrupted
