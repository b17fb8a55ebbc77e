"""The evidence functions on the example corpus: discover, fetch (chunks, spans, superseded versions), navigate."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import EvidenceError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_store import QueryLeg
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.evidence_session import EvidenceSession
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from tests.conftest import EXAMPLES

# Small sections, so long ones become a parent chunk with children (navigate needs both).
SMALL_CHUNKS = ["ingest.chunker.max_chars=300"]
ORION = document_id_for("orion_planner.md", "acme_notes")
TEAM = document_id_for("team.md", "acme_notes")
SITES = document_id_for("sites.csv", "acme_notes")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("notes") / "acme_notes"
    shutil.copytree(EXAMPLES, folder)
    return folder


@pytest.fixture(scope="module")
def store(
    corpus: Path,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: SentenceTransformersTextEmbedder,
    prefect_harness: None,
) -> Iterator[KnowledgeStore]:
    config = load_config(SMALL_CHUNKS)
    opened = open_knowledge_store(
        AgragSettings(data_dir=tmp_path_factory.mktemp("data")), config.vector_store, embedder
    )
    ingest_into(str(corpus), config, opened, embedder)
    yield opened
    opened.close()


@pytest.fixture
def session(store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder) -> EvidenceSession:
    return EvidenceSession(store, embedder)


def test_discover_finds_passages_with_ids_snippets_and_locations(session: EvidenceSession) -> None:
    found = session.discover("Who wrote the Orion Planner?", limit=5)
    assert found.ok and found.mode == "hybrid" and 0 < len(found.hits) <= 5
    top = [h for h in found.hits if "Maria Chen wrote" in h.snippet]
    assert top, "the passage naming the author is among the hits"
    hit = top[0]
    evidence_id = EvidenceId.parse(hit.id)
    assert evidence_id.document_id == ORION and evidence_id.order is not None
    assert hit.location.title == "Orion Planner Design Notes"
    assert hit.location.heading_path[-1] == "History and Authorship"
    assert hit.location.start < hit.location.end and set(hit.legs) <= {"dense", "keyword"}
    assert [h.score for h in found.hits] == sorted((h.score for h in found.hits), reverse=True)
    assert not session.fetched, "a snippet is not a fetch"


def test_graph_mode_is_the_bridge_recipe_within_the_scope_and_the_default_of_a_session_with_an_engine(
    store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    from agrag.components.data_models.search_filters import SearchFilters
    from agrag.pipelines.recipes import load_recipe
    from agrag.pipelines.search_engine import SearchEngine, SearchResponse

    engine, bridge = SearchEngine(store, embedder), load_recipe("bridge")
    asked: list[tuple[SearchFilters | None, int]] = []

    def search(query: str, filters: SearchFilters | None, limit: int) -> SearchResponse:
        asked.append((filters, limit))
        return engine.search_sync(query, bridge.model_copy(update={"limit": limit}), filters)

    question = "Who wrote the Orion Planner?"
    found = EvidenceSession(store, embedder, graph_search=search).discover(question, limit=3)
    assert found.ok and found.mode == "graph" and 0 < len(found.hits) <= 3
    assert asked == [(None, 4)]  # one more than asked, to say whether more matched
    assert any("Maria Chen wrote" in h.snippet for h in found.hits)
    assert {leg for h in found.hits for leg in h.legs} <= {"ppr", "bridge"}
    document = EvidenceId.parse(found.hits[0].id).document_id
    within = EvidenceSession(store, embedder, EvidenceScope((document,)), graph_search=search).discover(question)
    assert within.hits and {EvidenceId.parse(h.id).document_id for h in within.hits} == {document}
    assert asked[-1][0] == SearchFilters(document_ids=(document,))  # the scope goes into the store queries
    assert EvidenceSession(store, embedder, EvidenceScope(()), graph_search=search).discover(question).hits == ()
    with pytest.raises(EvidenceError, match=r"'graph'.*keyword, vector or hybrid"):
        EvidenceSession(store, embedder).discover(question, "graph")
    engine.close()


def test_each_mode_runs_its_own_legs(session: EvidenceSession) -> None:
    keyword = session.discover("Camille Durand", mode="keyword", limit=3)
    assert keyword.hits and all(h.legs == ("keyword",) for h in keyword.hits)
    assert any("Camille Durand" in h.snippet for h in keyword.hits)
    vector = session.discover("who leads the robotics team", mode="vector", limit=3)
    assert vector.hits and all(h.legs == ("dense",) for h in vector.hits)
    assert session.discover("zzqx wibblefrob", mode="keyword").hits == ()
    assert session.discover("robots", limit=1).truncated, "more passages matched than the one returned"
    with pytest.raises(EvidenceError, match="Unknown discover mode 'fuzzy': use one of keyword, vector, hybrid"):
        session.discover("x", mode="fuzzy")


def test_a_failed_leg_is_reported_and_the_other_leg_still_returns(
    session: EvidenceSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = session.store.chunks
    real = chunks.query_leg

    def keyword_down(leg: QueryLeg, *args: object, **kwargs: object) -> object:
        if leg is QueryLeg.KEYWORD:
            raise RuntimeError("keyword index unavailable")
        return real(leg, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(chunks, "query_leg", keyword_down)
    found = session.discover("Who wrote the Orion Planner?")
    assert not found.ok and "keyword index unavailable" in found.failed_legs["keyword"]
    assert found.hits and all(h.legs == ("dense",) for h in found.hits)


def test_fetch_returns_the_exact_text_of_chunks_and_spans(session: EvidenceSession, corpus: Path) -> None:
    hit = session.discover("Who wrote the Orion Planner?", limit=1).hits[0]
    source = (corpus / "orion_planner.md").read_text()
    fetched = session.fetch([hit.id])
    (item,) = fetched.items
    assert item.id == hit.id and item.current and not item.partial
    assert item.text == source[item.location.start : item.location.end]
    start = source.index("Maria Chen wrote")
    span = EvidenceId(ORION, EvidenceId.parse(hit.id).version, span=(start, start + 30))
    (piece,) = session.fetch([str(span)]).items
    assert piece.text == source[start : start + 30] and not piece.partial
    beyond = EvidenceId(ORION, span.version, span=(len(source) - 10, len(source) + 500))
    (tail,) = session.fetch([str(beyond)]).items
    assert tail.partial and tail.text and source.rstrip().endswith(tail.text.strip()), "past the end: partial"
    assert {hit.id, str(span), str(beyond)} <= set(session.fetched)

    unknown = EvidenceId(ORION, "0123456789ab", order=0)
    result = session.fetch([str(unknown), hit.id])
    assert result.not_found == (str(unknown),) and [i.id for i in result.items] == [hit.id]
    with pytest.raises(EvidenceError, match="is not an evidence id"):
        session.fetch([hit.id, "not-an-id"])


def _chunk_ids(session: EvidenceSession, document_id: str) -> list[EvidenceId]:
    chunk_ids = session.store.graph.document_chunk_ids(document_id)
    chunks = session.store.graph.get_chunks(chunk_ids)
    return [EvidenceId.of_chunk(c) for c in chunks if c.current]


def test_navigate_moves_to_parent_children_siblings_and_neighbours(session: EvidenceSession) -> None:
    graph = session.store.graph
    chunks = [c for c in graph.get_chunks(graph.document_chunk_ids(ORION)) if c.current]
    child = next(c for c in chunks if c.parent_id and sum(o.parent_id == c.parent_id for o in chunks) >= 2)
    child_id = str(EvidenceId.of_chunk(child))

    (parent,) = session.navigate(child_id, "parent").items
    assert EvidenceId.parse(parent.id).chunk_id == child.parent_id and child.text in parent.text
    children = session.navigate(parent.id, "children").items
    assert child_id in [c.id for c in children]
    assert [c.location.start for c in children] == sorted(c.location.start for c in children)
    siblings = session.navigate(child_id, "siblings").items
    assert siblings and child_id not in [s.id for s in siblings]
    assert {s.id for s in siblings} | {child_id} == {c.id for c in children}
    following = session.navigate(child_id, "next").items
    previous = session.navigate(following[0].id, "previous").items if following else []
    assert not following or child_id in [p.id for p in previous]
    assert parent.id in session.fetched, "navigated passages count as read"
    with pytest.raises(EvidenceError, match="Unknown direction 'up': use one of parent, children"):
        session.navigate(child_id, "up")


def test_navigate_finds_the_cells_around_a_table_cell(session: EvidenceSession, corpus: Path) -> None:
    source = (corpus / "sites.csv").read_text()
    table = next(c for c in session.store.graph.get_chunks(session.store.graph.document_chunk_ids(SITES)) if c.cells)
    every = session.navigate(str(EvidenceId.of_chunk(table)), "cells").items
    assert "Camille Durand" in [c.text for c in every] and "Site lead" in [c.text for c in every]
    start = source.index("Camille Durand")
    cell = EvidenceId(SITES, table.document_version, span=(start, start + len("Camille Durand")))
    around = [c.text for c in session.navigate(str(cell), "cells").items]
    assert "Site lead" in around, "its column's header"
    assert {"Lyon DC", "Lyon", "30"} <= set(around), "its row"
    assert "Camille Durand" not in around and "Pieter de Vries" in around
    with pytest.raises(EvidenceError, match="is not in a table"):
        session.navigate(str(_chunk_ids(session, ORION)[0]), "cells")


def test_scope_applies_to_every_function(store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder) -> None:
    scoped = EvidenceSession(store, embedder, EvidenceScope((TEAM,)))
    outside = _chunk_ids(scoped, ORION)
    found = scoped.discover("Who wrote the Orion Planner?", limit=20)
    assert found.hits and {EvidenceId.parse(h.id).document_id for h in found.hits} == {TEAM}
    result = scoped.fetch([str(i) for i in outside])
    assert result.items == () and result.not_found == tuple(str(i) for i in outside)
    span = EvidenceId(ORION, outside[0].version, span=(0, 40))
    assert scoped.fetch([str(span)]).items == ()
    for direction in ("parent", "children", "siblings", "next", "previous"):
        assert scoped.navigate(str(outside[0]), direction).items == ()
    assert not scoped.fetched
    nothing = EvidenceSession(store, embedder, EvidenceScope(()))
    assert nothing.discover("robots").hits == ()


def test_an_old_version_stays_readable_and_says_it_is_superseded(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    note = folder / "arm.md"
    note.write_text("# Kestrel Arm\n\nThe Kestrel Arm was built by Maria Chen in 2022.\n")
    config = load_config()
    opened = open_knowledge_store(AgragSettings(data_dir=tmp_path / "data"), config.vector_store, embedder)
    try:
        ingest_into(str(folder), config, opened, embedder)
        session = EvidenceSession(opened, embedder)
        old = session.discover("Who built the Kestrel Arm?", limit=1).hits[0]
        note.write_text("# Kestrel Arm\n\nThe Kestrel Arm was rebuilt by Lena Brandt in 2024.\n")
        ingest_into(str(folder), config, opened, embedder)
        (before,) = session.fetch([old.id]).items
        assert not before.current and "Maria Chen" in before.text
        new = session.discover("Who built the Kestrel Arm?", limit=1).hits[0]
        (after,) = session.fetch([new.id]).items
        assert after.current and "Lena Brandt" in after.text and new.id != old.id
    finally:
        opened.close()


def test_find_entities_gives_supporting_passages_in_scope(session: EvidenceSession) -> None:
    found = session.find_entities("Maria Chen", limit=5)
    assert found and found[0].name == "Maria Chen"
    maria = found[0]
    assert 1 <= len(maria.passages) <= 3
    texts = session.fetch(maria.passages).items
    assert len(texts) == len(maria.passages) and all("Maria Chen" in t.text or "Maria" in t.text for t in texts)
    only_team = EvidenceSession(session.store, session.embedder, EvidenceScope((TEAM,)))
    (scoped,) = [e for e in only_team.find_entities("Maria Chen", limit=5) if e.id == maria.id]
    assert {EvidenceId.parse(p).document_id for p in scoped.passages} == {TEAM}


def test_find_entities_gives_the_facts_passages_state_about_each_entity(session: EvidenceSession) -> None:
    maria = session.find_entities("Who did Maria Chen work with on the Orion Planner?", limit=5)
    (found,) = [e for e in maria if e.name == "Maria Chen"]
    assert 1 <= len(found.facts) <= 3
    for fact in found.facts:
        assert "Maria Chen" in fact.fact and " -[" in fact.fact and "]-> " in fact.fact
        assert found.id in (fact.source_id, fact.target_id)
        texts = session.fetch(fact.passages).items
        assert texts and all("Maria" in t.text for t in texts), "each passage states the fact"
    orion = [f for f in found.facts if "Orion Planner" in f.fact]
    assert orion and found.facts[0] == orion[0], "the fact most like the query comes first"
    only_team = EvidenceSession(session.store, session.embedder, EvidenceScope((TEAM,)))
    for entity in only_team.find_entities("Maria Chen", limit=5):
        assert {EvidenceId.parse(p).document_id for f in entity.facts for p in f.passages} <= {TEAM}


def test_explore_marks_each_edge_with_the_passage_that_states_it(session: EvidenceSession) -> None:
    maria = session.find_entities("Maria Chen", limit=1)[0]
    explored = session.explore(maria.id, depth=1)
    assert explored.entity is not None and explored.entity.id == maria.id
    assert explored.edges and all(e.hop == 1 for e in explored.edges)
    assert maria.id in {explored.edges[0].source_id, explored.edges[0].target_id}
    for edge in explored.edges:
        assert edge.kind == "assertion" and edge.passages
        (text,) = session.fetch(edge.passages[:1]).items
        assert edge.source.split()[0] in text.text or edge.target.split()[0] in text.text
    by_name = session.explore("Maria Chen", depth=2)
    assert {e.id for e in explored.edges} <= {e.id for e in by_name.edges}
    assert max(e.hop for e in by_name.edges) == 2
    kept = explored.edges[0].type
    assert {e.type for e in session.explore(maria.id, relation_types=[kept]).edges} == {kept}
    assert session.explore("Nobody Atall").entity is None
    with pytest.raises(EvidenceError, match="depth must be between 1 and 3"):
        session.explore(maria.id, depth=4)


def test_citations_are_checked_against_what_was_read_and_rendered(session: EvidenceSession, corpus: Path) -> None:
    author = next(h for h in session.discover("Who wrote the Orion Planner?", limit=5).hits if "Maria" in h.snippet)
    unread = next(h for h in session.discover("Lena Brandt product manager", limit=5).hits if h.id != author.id)
    session.fetch([author.id])
    answer = (
        f"Maria Chen wrote the Orion Planner in 2023 [{author.id}]. "
        f"She built the first version in 2021 [{author.id}]. "
        f"Lena Brandt is the product manager [{unread.id}]. "
        "Tomas Eriksen defined the map format."
    )
    check = session.check_citations(answer)
    assert check.cited == (author.id,) and not check.grounded
    assert [(i.id, i.reason) for i in check.invalid] == [(unread.id, "not_fetched")]
    assert unread.id not in check.answer and author.id in check.answer
    assert any("2021" in claim.missing_figures for claim in check.unsupported), "a figure its evidence lacks"
    assert any("Tomas Eriksen" in sentence for sentence in check.uncited), "a name with no citation"

    rendered = session.render_citations(f"Maria Chen wrote the Orion Planner in 2023 [{author.id}].")
    assert "[1]" in rendered.text and author.id not in rendered.text.split("Sources:")[0]
    (source,) = rendered.sources
    assert source.number == 1 and source.id == author.id and source.title == "Orion Planner Design Notes"
    assert "Orion Planner Design Notes" in rendered.text.split("Sources:")[1]
