"""Every recipe of conf/recipe on the example corpus: its shape, its steps, its filters and its failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AllRetrievalMethodsFailedError, RetrievalError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import RetrievalSettings
from tests.support.scripted_llm import scripted_llm


@pytest.fixture
def engine(example_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder) -> SearchEngine:
    return SearchEngine(example_store, embedder, RetrievalSettings(rrf_k=60))


def _kinds(results: list) -> set[type]:
    """The kinds of item found; a ResolvedEntity (an entity that absorbed others) is an Entity."""
    return {Entity if isinstance(r.item, Entity) else type(r.item) for r in results}


async def test_hybrid_answers_who_worked_with_someone_as_the_spec_shows(engine: SearchEngine) -> None:
    results = await engine.search("Who worked with Lena Brandt?", load_recipe("hybrid"))
    entities = [r.item.name for r in results if isinstance(r.item, Entity)]
    both = [
        r for r in results if isinstance(r.item, Chunk) and "Lena Brandt" in r.item.text and "Maria Chen" in r.item.text
    ]
    assert "Lena Brandt" in entities
    assert both, "the chunk that names both comes back"
    chunk = both[0].item
    assert chunk.heading_path[-1] == "Lena Brandt" and chunk.heading_path[0] != ""


async def test_entity_recipe_returns_entities_only(engine: SearchEngine) -> None:
    results = await engine.search("the planner", load_recipe("entity"))
    assert 0 < len(results) <= 10 and _kinds(results) == {Entity}
    assert {r.method for r in results} == {"entity"}


async def test_chunk_recipe_returns_child_chunks_with_their_parent(engine: SearchEngine) -> None:
    results = await engine.search("replanning storm in Lyon", load_recipe("chunk"))
    assert _kinds(results) == {Chunk}
    for r in results:
        assert isinstance(r.item, Chunk)
        if r.item.parent_id:
            assert r.parent is not None and r.parent.id == r.item.parent_id and r.item.text in r.parent.text


async def test_thematic_recipe_returns_community_reports(engine: SearchEngine) -> None:
    results = await engine.search("What are the main themes of the notes?", load_recipe("thematic"))
    assert 0 < len(results) <= 5 and _kinds(results) == {Community}
    assert all(isinstance(r.item, Community) and r.item.report and r.item.report.title for r in results)


async def test_graph_expand_adds_neighbours_and_reports(engine: SearchEngine) -> None:
    recipe = load_recipe("graph_expand")
    response = await engine.search_with_trace("Maria Chen", recipe)
    results = response.results
    assert len(results) <= 20
    methods = {m for r in results for m in r.methods}
    assert {"entity", "bfs", "community_expand"} <= methods
    assert any(isinstance(r.item, Relation) for r in results), "relations reached by the walk"
    assert sum(isinstance(r.item, Community) for r in results) <= recipe.community_top_k
    assert [s.method for s in response.trace.steps] == ["bfs", "community_expand"]
    assert all(s.ok for s in response.trace.steps)
    seeds = {r.item.id for r in results if isinstance(r.item, Entity) and r.method == "entity"}
    walked = {r.item.id for r in results if isinstance(r.item, Entity) and r.methods == ("bfs",)}
    assert walked and not walked & seeds


async def test_graph_expand_returns_the_passages_that_state_the_walk(engine: SearchEngine) -> None:
    recipe = load_recipe("graph_expand")
    response = await engine.search_with_trace("Who did Maria Chen work with?", recipe)
    graph = engine.store.graph
    seeds = [r.item.id for r in response.results if isinstance(r.item, Entity) and r.method == "entity"][:5]
    relations = graph.traverse(seeds, depth=2, per_hop=engine.settings.traversal_per_hop, limit=100)
    stating = {c for relation, _ in relations for c in relation.chunk_ids}
    naming = {c for ids in graph.supporting_chunk_ids(seeds).values() for c in ids}
    passages = [r for r in response.results if isinstance(r.item, Chunk)]
    assert passages, "the walk brings the passages that state it"
    for passage in passages:
        assert passage.methods == ("bfs",) and passage.item.id in stating | naming
        if passage.item.parent_id:
            assert passage.parent is not None and passage.parent.id == passage.item.parent_id
    assert any("Maria Chen" in p.item.text and "Lena Brandt" in p.item.text for p in passages)
    (walk,) = response.trace.steps[:1]
    assert walk.method == "bfs" and walk.count >= len(passages)

    team = document_id_for("team.md", "acme_notes")
    scoped = await engine.search("Who did Maria Chen work with?", recipe, SearchFilters(document_ids=(team,)))
    scoped_passages = [r.item for r in scoped if isinstance(r.item, Chunk)]
    assert scoped_passages and {c.document_id for c in scoped_passages} == {team}, "filters narrow the passages"

    without = recipe.model_copy(update={"bfs_passages": False})
    plain = await engine.search("Who did Maria Chen work with?", without)
    assert not [r for r in plain if isinstance(r.item, Chunk)], "bfs_passages: false keeps only the neighbours"


async def test_entity_search_puts_the_entities_the_query_names_first(engine: SearchEngine) -> None:
    results = await engine.search("Which robots did Lena Brandt test with the Orion Planner?", load_recipe("entity"))
    first = [r.item.name for r in results[:2] if isinstance(r.item, Entity)]
    assert first == ["Lena Brandt", "Orion Planner"], "named in the query's order, before similar entities"
    acronyms = SearchFilters(labels=("Acronym",))
    filtered = await engine.search("What did Lena Brandt do?", load_recipe("entity"), acronyms)
    assert filtered, "acronyms are still found"
    assert all(isinstance(r.item, Entity) and r.item.label == "Acronym" for r in filtered), "the named one is filtered"


async def test_text2cypher_recipe_computes_a_count(
    example_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder
) -> None:
    def script(messages: list[dict[str, str]]) -> str:
        return json.dumps({"cypher": "MATCH (d:Document) RETURN count(d) AS documents"})

    with scripted_llm(script) as server:
        llm = OpenAIChatClient(server.base_url, "scripted", max_retries=0)
        engine = SearchEngine(example_store, embedder, RetrievalSettings(), llm=llm)
        results = await engine.search("How many documents are there?", load_recipe("text2cypher"))
    (row,) = [r.item for r in results]
    assert isinstance(row, CypherRow) and row.columns == ("documents",) and row.values == (9,)
    components = set(engine.pipeline_for(load_recipe("text2cypher")).graph.nodes)
    assert "query_embedder" not in components, "text2cypher alone never embeds the query"


async def test_text2cypher_without_an_llm_fails_with_a_typed_reason(engine: SearchEngine) -> None:
    from agrag.components.errors import AllRetrievalMethodsFailedError

    with pytest.raises(AllRetrievalMethodsFailedError, match="AGRAG_LLM_BASE_URL"):
        await engine.search("How many documents are there?", load_recipe("text2cypher"))


async def test_filters_apply_inside_each_method(engine: SearchEngine) -> None:
    team = document_id_for("team.md", "acme_notes")
    acronyms = SearchFilters(labels=("Acronym",))  # the offline extractor's labels: Name, Acronym, Topic
    results = await engine.search("the robot middleware", load_recipe("entity"), acronyms)
    assert results and all(isinstance(r.item, Entity) and r.item.label == "Acronym" for r in results)

    only_team = SearchFilters(document_ids=(team,))
    chunks = await engine.search("robots and incidents", load_recipe("chunk"), only_team)
    assert chunks and all(isinstance(r.item, Chunk) and r.item.document_id == team for r in chunks)
    entities = await engine.search("robots and incidents", load_recipe("entity"), only_team)
    team_entities = engine.store.graph.entity_ids_of_documents([team])
    assert entities and all(r.item.id in team_entities for r in entities)
    # A report summarises every document its members come from: under a document filter it is refused (issue 15).
    with pytest.raises(AllRetrievalMethodsFailedError, match="FilterNotHonouredError: community cannot keep"):
        await engine.search("themes", load_recipe("thematic"), only_team)

    tables = await engine.search(
        "owner of each component", load_recipe("chunk"), SearchFilters(properties={"kind": "table"})
    )
    assert tables and all(isinstance(r.item, Chunk) and r.item.kind == "table" for r in tables)
    named = await engine.search("planner", load_recipe("entity"), SearchFilters(properties={"name": "Orion Planner"}))
    assert [r.item.name for r in named if isinstance(r.item, Entity)] == ["Orion Planner"]
    top = await engine.search("themes", load_recipe("thematic"), SearchFilters(properties={"level": [0]}))
    assert top and all(isinstance(r.item, Community) and r.item.level == 0 for r in top)

    with pytest.raises(RetrievalError, match=r"Unknown filter property colour: filters\.properties can name"):
        await engine.search("x", load_recipe("chunk"), SearchFilters(properties={"colour": "red"}))


async def test_relation_types_limit_the_walk(engine: SearchEngine) -> None:
    recipe = load_recipe("graph_expand")
    all_types = {r.item.type for r in await engine.search("Maria Chen", recipe) if isinstance(r.item, Relation)}
    assert len(all_types) >= 1
    kept = sorted(all_types)[0]
    limited = await engine.search("Maria Chen", recipe, SearchFilters(relation_types=(kept,)))
    assert {r.item.type for r in limited if isinstance(r.item, Relation)} == {kept}


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.tiny_cross_encoder import make_tiny_cross_encoder

    return make_tiny_cross_encoder(tmp_path_factory.mktemp("cross-encoder"))


async def test_hybrid_reranked_keeps_report_slots_after_a_cross_encoder_that_scores_reports_lowest(
    example_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder, tiny_cross_encoder: Path
) -> None:
    from sentence_transformers import CrossEncoder

    from agrag.components.rerankers.cross_encoder_reranker import rerank_text

    recipe = load_recipe("hybrid_reranked")
    engine = SearchEngine(example_store, embedder, RetrievalSettings(cross_encoder_model=tiny_cross_encoder))
    response = await engine.search_with_trace("Who owns the Atlas Controller?", recipe)
    results = response.results
    reports = [r for r in results if isinstance(r.item, Community)]
    others = [r for r in results if not isinstance(r.item, Community)]
    assert len(results) == recipe.limit and 0 < len(reports) <= recipe.community_top_k
    model = CrossEncoder(str(tiny_cross_encoder))
    report_scores = model.predict([("Who owns the Atlas Controller?", rerank_text(r.item)) for r in reports])
    assert max(report_scores) < min(r.score for r in others), "the model scores reports lowest, yet they stay"
    assert [s.method for s in response.trace.steps] == ["community_expand", "rerank"]
    assert all(s.ok and s.count > 0 and s.elapsed_ms > 0 for s in response.trace.steps)


async def test_hybrid_reranked_without_a_model_says_which_setting_to_set(engine: SearchEngine) -> None:
    from agrag.components.errors import ConfigError

    with pytest.raises(ConfigError, match="RETRIEVAL_CROSS_ENCODER_MODEL is not set"):
        await engine.search("Atlas", load_recipe("hybrid_reranked"))


async def test_a_broken_method_is_on_the_trace_and_the_others_return(
    example_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder, tmp_path: Path
) -> None:
    from dataclasses import replace

    from agrag.components.errors import AllRetrievalMethodsFailedError
    from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
    from agrag.components.stores.vector_store import VectorCollection
    from agrag.pipelines.config_models import RecipeConfig, RetrievalMethod

    missing = QdrantEdgeVectorStore(tmp_path / "gone", VectorCollection.COMMUNITIES, 384, 60, ("level",))
    missing.close()  # a collection that is gone: every query on it fails
    broken = replace(example_store, communities=missing, lock=None, journal=None)
    engine = SearchEngine(broken, embedder, RetrievalSettings())
    recipe = RecipeConfig(
        name="three", methods=(RetrievalMethod.ENTITY, RetrievalMethod.CHUNK, RetrievalMethod.COMMUNITY)
    )
    response = await engine.search_with_trace("Atlas Controller", recipe)
    assert response.results and {r.method for r in response.results} <= {"entity", "chunk"}
    assert set(response.trace.failures) == {"community"}

    with pytest.raises(AllRetrievalMethodsFailedError, match="community"):
        await engine.search("Atlas Controller", RecipeConfig(name="one", methods=(RetrievalMethod.COMMUNITY,)))


async def test_find_entity_traverse_and_relationship_types(engine: SearchEngine) -> None:
    maria = await engine.find_entity("maria chen")
    assert maria is not None and maria.name == "Maria Chen"
    typo = await engine.find_entity("Orion Planer")
    assert typo is not None and "Orion Planner" in typo.name, "a misspelt name resolves to the most similar entity"
    named_first = (await engine.search("Orion Planer", load_recipe("entity")))[0].item
    assert isinstance(named_first, Entity) and named_first.name == "Orion", "entity search puts the named entity first"
    acronym = await engine.find_entity("Maria Chen", SearchFilters(labels=("Acronym",)))
    assert acronym is None or acronym.label == "Acronym", "filters hold for the lookup too"

    types = await engine.list_relationship_types("Maria Chen")
    assert types and all(count > 0 for count in types.values())
    around = await engine.traverse(maria.id, depth=1, limit=50)
    relations = [r.item for r in around if isinstance(r.item, Relation)]
    assert relations and all(maria.id in (x.source_id, x.target_id) for x in relations)
    assert all(r.method == "traverse" for r in around)
    assert maria.id not in {r.item.id for r in around if isinstance(r.item, Entity)}, "never the seed itself"
    one_type = sorted(types)[0]
    typed = await engine.traverse("Maria Chen", relation_type=one_type, depth=1, limit=50)
    assert {r.item.type for r in typed if isinstance(r.item, Relation)} == {one_type}
    with pytest.raises(RetrievalError, match=r"No entity is called or has the id 'Nobody Here Zzz'\. Did you mean"):
        await engine.traverse("Nobody Here Zzz")
    with pytest.raises(RetrievalError, match="No entity is called"):
        await engine.list_relationship_types("Orion Planer")


async def test_the_specs_usage_example_runs_as_written(
    example_store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    store = example_store
    # The example of recipe-search.txt, with agrag's import lines.
    from agrag.components.data_models.chunk import Chunk
    from agrag.components.data_models.entity import Entity
    from agrag.pipelines.recipes import HYBRID
    from agrag.pipelines.search_engine import SearchEngine

    engine = SearchEngine(graph_store=store, embedder=embedder)
    results = await engine.search("Who wrote the Orion Planner?", HYBRID)
    for result in results[:4]:
        item = result.item
        if isinstance(item, Entity):
            label = item.name
        elif isinstance(item, Chunk):
            label = item.text[:40].replace("\n", " ")
        else:
            label = ""
        print(f"{result.method:<7} {result.score:.4f}  {type(item).__name__:<7} {label}")

    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and {line.split()[0] for line in lines} == {"entity", "chunk"}
    assert any(line.startswith("entity") and line.endswith("Orion Planner") for line in lines[:2])
    assert any("Maria Chen wr" in line for line in lines[:2]), "the chunk that names its author ranks in the top two"
