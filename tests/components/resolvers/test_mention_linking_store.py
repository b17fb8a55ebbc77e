"""Short-form links end to end: the lexical extractor, the resolver and the merge log of a real Kùzu store."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import entity_id_for
from agrag.components.data_models.resolution import MERGED, Resolution, ResolutionRule
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.resolvers.entity_resolver import EntityResolver
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

RUN_1 = {
    "a": "The survey is led by Ada Okafor. The report was signed by Dr Okafor, and the crew thanked Okafor's team.",
    "b": "The winch was serviced by Marcus Hale. On Monday the skipper asked Hale to check it again.",
}
RUN_2 = {
    "c": "The budget went to Ada Okafor for review. She asked Ada to send it on.",
    "d": "The meeting was chaired by Okafor, with Ada Okafor taking notes.",
}
# The lexical extractor types them all Person ("Dr Okafor" is Okafor, the title its evidence).
ADA, OKAFOR = entity_id_for("Ada Okafor", "Person"), entity_id_for("Okafor", "Person")
MARCUS, HALE, FIRST_NAME = (entity_id_for(n, "Person") for n in ("Marcus Hale", "Hale", "Ada"))


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    yield store
    store.close()


def ingest(graph: KuzuGraphStore, texts: dict[str, str], run_id: str) -> Resolution:
    """One document per text, one chunk each: extract, resolve against the store, write, log, commit."""
    documents = [Document(id=d, version="v1", title=f"Note {d}", source_path=f"{d}.md") for d in texts]
    chunks = [Chunk(chunk_id_for(d, "v1", 0), d, "v1", t, (), 0, 0, len(t)) for d, t in texts.items()]
    extraction = LexicalEntityExtractor().run(chunks=chunks)["extraction"]
    stored = sorted(graph.resolved_ids([e.id for e in extraction.entities]))
    known = graph.canonical_entities()
    resolution: Resolution = EntityResolver().run(extraction=extraction, known=known, stored=stored)["resolution"]
    graph.write_chunks(documents, chunks)
    graph.upsert_entities(list(resolution.extraction.entities))
    graph.upsert_mentions(list(resolution.extraction.mentions))
    graph.upsert_relations(list(resolution.extraction.relations))
    graph.apply_resolution(resolution.decisions, resolution.candidates, run_id)
    graph.commit_documents([(d, 1) for d in documents])
    return resolution


def test_short_forms_are_logged_merges_that_an_undo_takes_back(graph: KuzuGraphStore) -> None:
    ingest(graph, RUN_1, "run1")
    log = [e for e in graph.merge_log() if e.rule == ResolutionRule.SHORT_FORM]
    assert sorted((e.member_name, e.resolved_name, e.decision, e.undone) for e in log) == [
        ("Hale", "Marcus Hale", MERGED, False),
        ("Okafor", "Ada Okafor", MERGED, False),
    ]
    (hale,) = [e for e in log if e.member_name == "Hale"]
    assert hale.reason == (
        "'Hale' (Person) is the surname of 'Marcus Hale' (Person), the only such name in its 1 document"
    )
    assert graph.resolved_ids([OKAFOR, HALE]) == {OKAFOR: ADA, HALE: MARCUS}
    chunk_a = chunk_id_for("a", "v1", 0)
    assert graph.supporting_chunk_ids([ADA])[ADA] == [chunk_a]  # the short forms' mentions count for Ada

    (undone,) = graph.undo_merge(OKAFOR)
    assert (undone.member_name, undone.rule, undone.undone) == ("Okafor", ResolutionRule.SHORT_FORM, True)
    assert graph.resolved_ids([OKAFOR, HALE]) == {OKAFOR: OKAFOR, HALE: MARCUS}
    assert OKAFOR in {e.id for e in graph.canonical_entities()}


def test_a_later_run_links_to_stored_names_and_keeps_an_undo(graph: KuzuGraphStore) -> None:
    ingest(graph, RUN_1, "run1")
    graph.undo_merge(OKAFOR)
    second = ingest(graph, RUN_2, "run2")
    # "Ada" is new: it joins the stored "Ada Okafor" its document names; "Okafor" was unlinked by hand: it stays so
    assert [(d.member_id, d.resolved_id) for d in second.decisions if d.rule == ResolutionRule.SHORT_FORM] == [
        (FIRST_NAME, ADA)
    ]
    assert graph.resolved_ids([FIRST_NAME, OKAFOR, HALE]) == {FIRST_NAME: ADA, OKAFOR: OKAFOR, HALE: MARCUS}
    lines = {(e.id.split("-")[0], e.member_name, e.undone) for e in graph.merge_log() if e.rule == "short_form"}
    assert lines == {
        ("run1", "Hale", False),
        ("run1", "Okafor", True),
        ("run2", "Ada", False),
    }


def test_a_short_form_merged_by_an_earlier_run_keeps_its_merge(graph: KuzuGraphStore) -> None:
    ingest(graph, RUN_1, "run1")
    third = ingest(graph, {"e": "Another diver, Lena Hale, joined the crew. The skipper briefed Hale on Monday."}, "r3")
    assert [d for d in third.decisions if d.rule == ResolutionRule.SHORT_FORM] == []
    assert graph.resolved_ids([HALE]) == {HALE: MARCUS}
