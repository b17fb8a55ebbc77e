"""The entity method learns which entities a question names from the store, not by building the passage graph."""

from pathlib import Path

import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.graph.passage_graph import PassageGraph
from agrag.components.graph.passage_graph_cache import PassageGraphCache
from agrag.components.stores.graph_store import GraphStore
from agrag.flows.delete_flow import delete_from
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.runtime import open_runtime
from tests.service.conftest import copy_corpus, settings_of

QUESTIONS = (
    "Who wrote the Orion Planner?",
    "What caused the replanning storm in Lyon?",
    "Which incident involved the planner that Maria Chen wrote?",
    "What does the CAN bus connect?",
    "Who owns the Atlas Controller and the Vega Perception stack?",
)


def _agrees(graph: GraphStore, snapshot: PassageGraph) -> None:
    names = sorted(snapshot._names)
    read = graph.passage_names([*names, "nobody at all", ""])
    assert sorted(read.ids_by_name) == names
    for name in names:
        assert read.entities_named(name) == snapshot.entities_named(name), name
        for entity_id in snapshot.entities_named(name):
            assert read.chunk_count(entity_id) == snapshot.chunk_count(entity_id), (name, entity_id)
    assert read.entities_named("nobody at all") == []
    one = names[0]
    assert graph.passage_names([one]).entities_named(one) == snapshot.entities_named(one)


def test_the_store_names_what_the_snapshot_names_before_and_after_a_delete(
    ingested_corpus: Path, tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    data_dir = copy_corpus(ingested_corpus, tmp_path)
    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        graph = runtime.store.graph
        members = graph.merged_members([e for e in PassageGraph(graph.passage_edges()).entity_ids])
        assert members, "the example corpus has merged entities, whose members' names count too"
        before = PassageGraph(graph.passage_edges())
        _agrees(graph, before)
        delete_from(document_id_for("vendors.html", "acme_notes"), runtime.config, runtime.store, embedder)
        after = PassageGraph(graph.passage_edges())
        assert len(after._names) < len(before._names)
        _agrees(graph, after)  # entities only it named are gone from both
        assert graph.passage_names(sorted(set(before._names) - set(after._names))).ids_by_name == {}


def test_entity_search_answers_the_same_without_and_with_a_snapshot(
    ingested_corpus: Path, tmp_path: Path, embedder: SentenceTransformersTextEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = copy_corpus(ingested_corpus, tmp_path)
    built: list[int] = []
    original = PassageGraphCache.get

    def counted(self: PassageGraphCache) -> PassageGraph:
        built.append(1)
        return original(self)

    monkeypatch.setattr(PassageGraphCache, "get", counted)
    entity = load_recipe("entity")
    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        before = [runtime.engine.search_sync(q, entity).results for q in QUESTIONS]
        assert not built, "a name lookup built the passage graph"
        runtime.engine.search_sync(QUESTIONS[0], load_recipe("multi_hop"))  # builds the snapshot
        assert built
        after = [runtime.engine.search_sync(q, entity).results for q in QUESTIONS]
    assert any(results for results in before)
    for first, second in zip(before, after, strict=True):
        assert [(r.item.id, r.score) for r in first] == [(r.item.id, r.score) for r in second]
