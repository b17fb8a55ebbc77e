"""An adversarial scope suite: a caller scoped to two documents tries every way into the others and learns nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.evidence_session import EvidenceSession
from tests.conftest import EXAMPLES

READABLE = ("team.md", "sites.csv")
SCOPE = tuple(document_id_for(name, "acme_notes") for name in READABLE)
HIDDEN = sorted(p.name for p in EXAMPLES.iterdir() if p.is_file() and p.name not in READABLE)


@dataclass
class LeakCounter:
    """Every call made and every piece of hidden material seen in a result."""

    hidden_documents: set[str]
    hidden_sentences: list[str]
    hidden_entities: set[str]
    attempts: int = 0
    leaks: list[str] = field(default_factory=list)

    def inspect(self, what: str, result: object, echoed: tuple[str, ...] = ()) -> None:
        """Count one attempt and any hidden material in its result (``echoed``: what the caller sent, given back)."""
        self.attempts += 1
        text = repr(result)
        for sent in echoed:
            text = text.replace(sent, "")
        for document_id in self.hidden_documents:
            if document_id in text:
                self.leaks.append(f"{what}: names hidden document {document_id}")
        for sentence in self.hidden_sentences:
            if sentence in text:
                self.leaks.append(f"{what}: shows hidden text {sentence[:40]!r}")
        for entity_id in self.hidden_entities:
            if entity_id in text:
                self.leaks.append(f"{what}: reveals hidden entity {entity_id}")


def _sentences(text: str) -> list[str]:
    """Distinctive sentences of a hidden document (long enough not to occur by chance in a readable one)."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if len(s.strip()) > 60]


@pytest.fixture(scope="module")
def counter(example_store: KnowledgeStore) -> LeakCounter:
    graph = example_store.graph
    hidden_docs = {document_id_for(name, "acme_notes") for name in HIDDEN}
    readable_entities = graph.entity_ids_of_documents(list(SCOPE))
    every_entity = graph.entity_ids_of_documents([*SCOPE, *hidden_docs])
    readable_text = " ".join((EXAMPLES / name).read_text() for name in READABLE)
    sentences = [
        s
        for name in HIDDEN
        for s in _sentences((EXAMPLES / name).read_text())
        if s not in " ".join(readable_text.split())
    ]
    return LeakCounter(hidden_docs, sentences, set(every_entity) - set(readable_entities))


@pytest.fixture
def scoped(example_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder) -> Iterator[EvidenceSession]:
    yield EvidenceSession(example_store, embedder, EvidenceScope(SCOPE))


def test_nothing_outside_the_scope_reaches_the_caller(
    scoped: EvidenceSession, example_store: KnowledgeStore, counter: LeakCounter
) -> None:
    graph = example_store.graph
    assert counter.hidden_entities and counter.hidden_sentences, "the suite has hidden material to look for"
    hidden_chunks = [c for d in sorted(counter.hidden_documents) for c in graph.get_chunks(graph.document_chunk_ids(d))]
    hidden_ids = [EvidenceId.of_chunk(c) for c in hidden_chunks]
    hidden_spans = [EvidenceId(c.document_id, c.document_version, span=(c.start, c.end)) for c in hidden_chunks]
    hidden_entities = graph.get_entities(sorted(counter.hidden_entities))

    for sentence in counter.hidden_sentences[:25]:
        for mode in ("keyword", "vector", "hybrid"):
            counter.inspect(f"discover {mode}", scoped.discover(sentence, mode, limit=20))
    for evidence_id in [*hidden_ids, *hidden_spans]:
        counter.inspect("fetch", scoped.fetch([str(evidence_id)]), (str(evidence_id),))
    for evidence_id in hidden_ids:
        for direction in ("parent", "children", "siblings", "previous", "next"):
            result = scoped.navigate(str(evidence_id), direction)
            counter.inspect(f"navigate {direction}", result, (str(evidence_id),))
    for entity in hidden_entities:
        counter.inspect("find_entities by name", scoped.find_entities(entity.name, limit=20))
        counter.inspect("explore by id", scoped.explore(entity.id, depth=2), (entity.id,))
        counter.inspect("explore by name", scoped.explore(entity.name, depth=2))
    for entity in scoped.find_entities("robots, planner, teams and sites", limit=50):
        counter.inspect("explore a readable entity", scoped.explore(entity.id, depth=3, limit=100))
    for evidence_id in hidden_ids[:20]:
        draft = f"The planner was written in 2023 [{evidence_id}]."
        counter.inspect("check_citations", scoped.check_citations(draft), (str(evidence_id),))

    assert counter.attempts > 300
    assert counter.leaks == [], f"{len(counter.leaks)} leaks in {counter.attempts} attempts: {counter.leaks[:5]}"


def test_an_id_outside_the_scope_behaves_like_one_that_does_not_exist(
    scoped: EvidenceSession, example_store: KnowledgeStore
) -> None:
    graph = example_store.graph
    hidden = graph.get_chunks(graph.document_chunk_ids(document_id_for("orion_planner.md", "acme_notes")))[0]
    outside = EvidenceId.of_chunk(hidden)
    invented = EvidenceId(hidden.document_id, "0123456789ab", order=hidden.order)
    for evidence_id in (outside, invented):
        assert scoped.fetch([str(evidence_id)]).not_found == (str(evidence_id),)
        assert scoped.navigate(str(evidence_id), "next").not_found == (str(evidence_id),)
    check = scoped.check_citations(f"The planner exists [{outside}].")
    assert [(i.id, i.reason) for i in check.invalid] == [(str(outside), "out_of_scope")] and not check.grounded
