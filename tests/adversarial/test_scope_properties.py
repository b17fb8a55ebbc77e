"""Scope enforcement as a property: on generated corpora, no read of a scoped session returns anything out of scope.

Hypothesis writes small corpora from a pool of names and sentence shapes (so documents share entities, which is
where a leak would come from), each is ingested for real (lexical extraction, resolution, communities), and then
every scope over its documents (the empty one included) is read with every evidence function and with the search
methods that take a document filter. Every passage id, entity, relation and search result returned must belong to a
document in the scope, and what is said of an entity must come from in-scope text.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agrag.components.data_models.chunk import Chunk, document_id_of
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.evidence import Direction, DiscoverMode, EvidenceScope
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AllRetrievalMethodsFailedError
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.evidence_session import EvidenceSession
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings

PEOPLE = ("Maria Chen", "Tomas Eriksen", "Priya Nair", "Daniel Okafor", "Ines Duarte")
THINGS = ("Orion Planner", "Vega Perception", "Atlas Controller", "Beacon Telemetry", "Lyon Site")
SHAPES = (
    "{a} maintains the {b}.",
    "{a} works with {c} on the {b}.",
    "The {b} sends data to the {d}.",
    "{a} reviews changes to the {b} every week.",
)
# Recipes whose methods need no LLM and no cross-encoder; each takes a document filter.
RECIPES = ("chunk", "hybrid", "entity", "graph_expand", "multi_hop", "bridge", "thematic", "fact")


@st.composite
def corpora(draw: st.DrawFn) -> list[str]:
    """Two to four markdown documents, each one or two sections of sentences about shared names."""
    documents = []
    for number in range(draw(st.integers(2, 4))):
        sections = []
        for section in range(draw(st.integers(1, 2))):
            sentences = [
                draw(st.sampled_from(SHAPES)).format(
                    a=draw(st.sampled_from(PEOPLE)),
                    b=draw(st.sampled_from(THINGS)),
                    c=draw(st.sampled_from(PEOPLE)),
                    d=draw(st.sampled_from(THINGS)),
                )
                for _ in range(draw(st.integers(1, 4)))
            ]
            sections.append(f"## Part {section + 1}\n\n" + " ".join(sentences))
        documents.append(f"# Notes {number}\n\n" + "\n\n".join(sections) + "\n")
    return documents


def _settings(data_dir: Path) -> Settings:
    agrag = AgragSettings(data_dir=data_dir, _env_file=None)  # type: ignore[call-arg]
    return Settings(agrag, RetrievalSettings(_env_file=None))  # type: ignore[call-arg]


def _document_of(evidence_id: str) -> str:
    return EvidenceId.parse(evidence_id).document_id


class ScopeOracle:
    """What a scope may show, read from the store without any scope (the code under test applies the scope)."""

    def __init__(self, runtime: Runtime, scope: tuple[str, ...]) -> None:
        self.graph = runtime.store.graph
        self.scope = set(scope)
        self.entities = self.graph.entity_ids_of_documents(scope) if scope else set()
        self.communities = self.graph.community_ids_of_documents(scope) if scope else set()
        # A chunk's headings and title are in-scope text too (the lexical extractor names the title's subject).
        texts = [" ".join((c.title, *c.heading_path, c.text)) for c in self._current_chunks(scope)]
        self.text = "\n".join(texts).casefold()

    def _current_chunks(self, scope: tuple[str, ...]) -> list[Chunk]:
        ids = [i for d in scope for i in self.graph.document_chunk_ids(d)]
        return self.graph.get_chunks(ids)

    def _names(self, fact: Fact) -> list[str]:
        """The fact's ends' names that in-scope text writes."""
        return [name.casefold() for name in (fact.source, fact.target) if name.casefold() in self.text]

    def check_result(self, result: SearchResult) -> None:
        item = result.item
        if isinstance(item, Chunk):
            assert item.document_id in self.scope, f"chunk {item.id} of {item.document_id} is out of scope"
            assert result.parent is None or result.parent.document_id in self.scope, f"the parent of {item.id}"
        elif isinstance(item, Entity):
            assert item.id in self.entities, f"entity {item.id} ({item.name}) has no support in scope"
            assert item.name.casefold() in self.text, f"{item.name!r} is not written in any in-scope text"
        elif isinstance(item, Relation):
            assert item.chunk_ids, f"relation {item.id} has no source passage"
            assert all(document_id_of(c) in self.scope for c in item.chunk_ids), f"relation {item.id} is stated outside"
        elif isinstance(item, Fact):
            found = self.graph.stated_facts([(item.id, item.source_id)]).get(item.id)
            stated = found.chunk_ids if found is not None else ()
            assert item.passages and stated, f"fact {item.id} has no current passage"
            assert all(document_id_of(c) in self.scope for c in stated), f"fact {item.statement} is stated outside"
            assert {item.source.casefold(), item.target.casefold()} <= set(self._names(item)), item.statement
        elif isinstance(item, Community):
            assert item.id in self.communities, f"community {item.id} has no member in scope"
        else:
            raise AssertionError(f"a filtered search returned a {type(item).__name__}")


def _check_session(runtime: Runtime, scope: tuple[str, ...], every_chunk: list[str], queries: tuple[str, ...]) -> int:
    """Read everything a caller could ask for within ``scope``; return how many items were checked."""
    oracle = ScopeOracle(runtime, scope)
    session = runtime.evidence_session(EvidenceScope(scope))  # with the engine: discover's graph mode is checked too
    checked = _check_queries(session, oracle, queries) + _check_reads(session, oracle, every_chunk)
    return checked + (_check_search(runtime, oracle, queries[0]) if len(scope) == 1 else 0)


def _check_queries(session: EvidenceSession, oracle: ScopeOracle, queries: tuple[str, ...]) -> int:
    checked = 0
    for query in queries:
        for mode in DiscoverMode:
            for hit in session.discover(query, mode, limit=20).hits:
                assert _document_of(hit.id) in oracle.scope, f"discover({query!r}, {mode}) returned {hit.id}"
                checked += 1
        for rank, entity in enumerate(session.find_entities(query, limit=5)):
            assert entity.id in oracle.entities, f"find_entities({query!r}) returned {entity.name}"
            assert entity.name.casefold() in oracle.text, f"{entity.name!r} is not written in any in-scope text"
            assert all(_document_of(p) in oracle.scope for p in entity.passages)
            for fact in entity.facts:
                assert {fact.source_id, fact.target_id} <= oracle.entities, f"find_entities told of {fact.fact}"
                assert fact.passages and all(_document_of(p) in oracle.scope for p in fact.passages)
            explored = session.explore(entity.id, depth=2) if rank < 2 else None
            for edge in explored.edges if explored else ():
                assert {edge.source_id, edge.target_id} <= oracle.entities, f"explore crossed out of scope: {edge}"
                assert all(_document_of(p) in oracle.scope for p in edge.passages)
                checked += 1
            checked += 1
    return checked


def _check_reads(session: EvidenceSession, oracle: ScopeOracle, every_chunk: list[str]) -> int:
    checked = 0
    fetched = session.fetch(every_chunk)
    assert {_document_of(item.id) for item in fetched.items} <= oracle.scope
    assert len(fetched.items) + len(fetched.not_found) == len(every_chunk)
    for evidence_id in every_chunk:
        for direction in (Direction.PARENT, Direction.CHILDREN, Direction.SIBLINGS, Direction.NEXT):
            for item in session.navigate(evidence_id, direction).items:
                assert _document_of(item.id) in oracle.scope, f"navigate({evidence_id}, {direction}) left the scope"
                checked += 1
    return checked + len(fetched.items)


def _check_search(runtime: Runtime, oracle: ScopeOracle, query: str) -> int:
    checked = 0
    scope = tuple(sorted(oracle.scope))
    for recipe in RECIPES:
        config = runtime.config_for([f"recipe={recipe}", "recipe.limit=20"]).recipe
        try:
            response = runtime.engine.search_sync(f"Who works on {query}?", config, SearchFilters(document_ids=scope))
        except AllRetrievalMethodsFailedError as refused:  # a recipe none of whose methods can keep to the filter
            assert "FilterNotHonouredError" in str(refused), refused
            continue
        for result in response.results:
            oracle.check_result(result)
            checked += 1
    return checked


@pytest.fixture(scope="module")
def corpus_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("generated")


@settings(
    max_examples=3,
    # Each example ingests a corpus: shrinking a failure would take many minutes, and the failing corpus is printed.
    phases=(Phase.explicit, Phase.generate),
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    documents=corpora(),
    queries=st.lists(st.sampled_from((*PEOPLE, *THINGS)), min_size=2, max_size=3, unique=True).map(tuple),
)
def test_no_scoped_read_returns_anything_out_of_scope(
    documents: list[str],
    queries: tuple[str, ...],
    corpus_root: Path,
    embedder: SentenceTransformersTextEmbedder,
    prefect_harness: None,
) -> None:
    run = corpus_root / f"run{len(list(corpus_root.iterdir()))}"
    folder = run / "docs"
    folder.mkdir(parents=True)
    for number, text in enumerate(documents):
        (folder / f"notes{number}.md").write_text(text, encoding="utf-8")
    with open_runtime([], _settings(run / "data"), require_data=False, embedder=embedder) as runtime:
        ingest_into(str(folder), runtime.config, runtime.store, embedder)
        document_ids = sorted(d.id for d in runtime.store.graph.documents(limit=100))
        assert len(document_ids) == len(documents)
        every_chunk = [
            str(EvidenceId.of_chunk(c))
            for d in document_ids
            for c in runtime.store.graph.get_chunks(runtime.store.graph.document_chunk_ids(d))
        ]
        checked = 0
        # Every scope of up to two documents, the empty one included (with four documents: 11 scopes); searches run
        # on one-document scopes (an empty document filter means "no filter": the empty scope is a session's only).
        for size in range(min(3, len(document_ids))):
            for scope in itertools.combinations(document_ids, size):
                checked += _check_session(runtime, scope, every_chunk, queries)
        assert checked > 0
