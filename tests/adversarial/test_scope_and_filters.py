"""Filters and document scope on every search method and step, through every entry point (issue 15, defects 1 and 2).

A method or step either honours a filter (every result it gives satisfies it, checked here against the graph with
plain queries) or refuses it: it does not run, and its trace status carries a ``FilterNotHonouredError`` naming it
and the filter. The declaration in ``agrag.components.retrievers.filter_support`` says which; this suite holds the
code to it on the example corpus, then checks the rule in-process, through the CLI and through HTTP with a scoped
token. Defect 2 gets a corpus of its own, where resolution merges an acronym defined in one document with the name
another document uses alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agrag.components.data_models.chunk import Chunk, document_id_of
from agrag.components.data_models.community import Community
from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import MERGED
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AllRetrievalMethodsFailedError
from agrag.components.stores.graph_store import GraphStore
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.config_models import RecipeConfig, Reranker, RetrievalMethod
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.pipelines.search_engine import SearchResponse
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from agrag.service.cli import app
from agrag.service.tools.registry import TOOLS
from agrag.service.tools.tool import ToolContext, ToolHost
from tests.conftest import EXAMPLES
from tests.support.data_dir_copy import copy_data_dir
from tests.support.scripted_llm import ScriptedLLM, scripted_llm
from tests.support.served_api import uvicorn_in_thread

READABLE = ("team.md", "sites.csv")
ADMIN = "admin-token-0123456789abcdef"
TEAM = "team-token-0123456789abcdef0"
OWNER = "owner-token-0123456789abcdef"
QUESTION = "Who maintains the ROS bridge of the Atlas Controller at the Lyon site?"
# What a model might write for any question: every passage of every document. It must never run under a filter.
LEAKY_CYPHER = "MATCH (c:Chunk) WHERE c.current RETURN c.document_id AS document, c.text AS text"
CHUNK_FIELDS = {
    "document_id": "document_id",
    "document_version": "document_version",
    "title": "title",
    "kind": "kind",
    "parent_id": "parent_id",
    "order": "order",
}


def settings_for(data_dir: Path, llm: ScriptedLLM | None = None, cross_encoder: Path | None = None) -> Settings:
    agrag = AgragSettings(  # type: ignore[call-arg]
        data_dir=data_dir, llm_base_url=llm.base_url if llm else None, llm_max_retries=0, _env_file=None
    )
    return Settings(agrag, RetrievalSettings(cross_encoder_model=cross_encoder, _env_file=None))  # type: ignore[call-arg]


def document_ids(graph: GraphStore) -> dict[str, str]:
    """File name to document id, read from the store (however ids are made)."""
    return {Path(d.source_path).name: d.id for d in graph.documents(limit=1000)}


@pytest.fixture(scope="module")
def leaky_llm() -> Iterator[ScriptedLLM]:
    with scripted_llm(lambda messages: json.dumps({"cypher": LEAKY_CYPHER})) as server:
        yield server


@pytest.fixture(scope="module")
def corpus(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> tuple[Path, Path]:
    """The example corpus ingested once, and a pristine copy of it for the CLI (which opens a data dir itself)."""
    root = tmp_path_factory.mktemp("scope")
    data_dir = root / "data"
    with open_runtime([], settings_for(data_dir), require_data=False, embedder=embedder) as runtime:
        ingest_into(str(EXAMPLES), runtime.config, runtime.store, embedder)
    copy_data_dir(data_dir, root / "cli")
    return data_dir, root / "cli"


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.tiny_cross_encoder import make_tiny_cross_encoder

    return make_tiny_cross_encoder(tmp_path_factory.mktemp("cross-encoder"))


@pytest.fixture(scope="module")
def runtime(
    corpus: tuple[Path, Path],
    embedder: SentenceTransformersTextEmbedder,
    leaky_llm: ScriptedLLM,
    tiny_cross_encoder: Path,
) -> Iterator[Runtime]:
    with open_runtime([], settings_for(corpus[0], leaky_llm, tiny_cross_encoder), embedder=embedder) as opened:
        yield opened


@pytest.fixture(scope="module")
def scope(runtime: Runtime) -> tuple[str, ...]:
    ids = document_ids(runtime.store.graph)
    return tuple(ids[name] for name in READABLE)


@dataclass
class Truth:
    """What the graph says, read with plain Cypher (not through the code under test)."""

    graph: GraphStore

    def _rows(self, query: str, **params: Any) -> list[list[Any]]:
        return self.graph.run_read_only(query, params, max_rows=1_000_000)[1]

    def records_in_scope(self, documents: tuple[str, ...]) -> dict[str, list[tuple[str, str, str, str]]]:
        """Resolved id to the entity records (id, name, label, description) current chunks of ``documents`` name."""
        rows = self._rows(
            "MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity) WHERE c.current AND c.document_id IN $docs "
            "RETURN DISTINCT e.id, e.merged_into, e.name, e.label, e.description",
            docs=list(documents),
        )
        found: dict[str, list[tuple[str, str, str, str]]] = {}
        for record_id, merged_into, name, label, description in rows:
            found.setdefault(merged_into or record_id, []).append((record_id, name, label, description))
        return found

    def relation_chunk_ids(self, relation_id: str) -> list[str]:
        """Every chunk id the graph says states the relation (current or not)."""
        rows = self._rows("MATCH (:Entity)-[x:RELATED]->(:Entity) WHERE x.id = $id RETURN x.chunk_ids", id=relation_id)
        return [c for row in rows for c in row[0]]

    def documents_naming(self, record_id: str) -> set[str]:
        """Every document any chunk of which (any version) names or is about the entity record."""
        rows = self._rows(
            "MATCH (c:Chunk)-[:MENTIONS|:ABOUT]->(e:Entity {id: $id}) RETURN DISTINCT c.document_id", id=record_id
        )
        return {row[0] for row in rows}


def _outside(item: Any, result: SearchResult, documents: set[str], records: dict[str, Any], truth: Truth) -> str:
    """Why ``item`` breaks a document filter ('' when it keeps to it)."""
    if isinstance(item, Chunk):
        parent_ok = result.parent is None or result.parent.document_id in documents
        return "" if item.document_id in documents and parent_ok else "a chunk of another document"
    if isinstance(item, Relation):
        inside = item.chunk_ids and all(document_id_of(c) in documents for c in item.chunk_ids)
        return "" if inside else "a relation stated outside the documents"
    if isinstance(item, Fact):  # every passage the graph has for it, not only those it shows, is in the documents
        stated = [*truth.relation_chunk_ids(item.id), *item.chunk_ids, *(c.id for c in item.passages)]
        inside = item.passages and all(document_id_of(c) in documents for c in stated)
        return "" if inside else "a fact stated outside the documents"
    if isinstance(item, Entity):
        named = records.get(item.id, [])
        if (item.name, item.label) not in {(name, label) for _, name, label, _ in named}:
            return f"{item.name!r}/{item.label} is not what the documents call it"
        traced = any(d == item.description and truth.documents_naming(r) <= documents for r, _, _, d in named)
        return "" if traced or not item.description else "a description not traced to the documents"
    return f"a {type(item).__name__} cannot be limited to documents"


def _stored(item: Any, key: str) -> tuple[bool, Any]:
    """Whether ``item`` stores the filter property ``key``, and its value."""
    if isinstance(item, Chunk) and key in CHUNK_FIELDS:
        return True, getattr(item, CHUNK_FIELDS[key])
    if isinstance(item, Entity) and key in ("name", "label"):
        return True, getattr(item, key)
    if isinstance(item, Fact) and key in ("type", "source", "target", "source_id", "target_id"):
        return True, getattr(item, key)
    if isinstance(item, Community) and key in ("level", "parent_id"):
        return True, getattr(item, key) or ""
    if isinstance(item, Community) and key in ("method", "title") and item.report is not None:
        return True, getattr(item.report, key)
    return False, None


def violations(results: list[SearchResult], filters: SearchFilters, truth: Truth) -> list[str]:
    """Every way a result breaks ``filters`` (empty when all satisfy them)."""
    broken: list[str] = []
    documents = set(filters.document_ids)
    records = truth.records_in_scope(filters.document_ids) if documents else {}
    for result in results:
        item = result.item
        where = f"{result.method} {type(item).__name__} {getattr(item, 'id', '')}"
        outside = _outside(item, result, documents, records, truth) if documents else ""
        if outside:
            broken.append(f"{where}: {outside}")
        if filters.labels and isinstance(item, Entity) and item.label not in filters.labels:
            broken.append(f"{where}: label {item.label}")
        if filters.relation_types and isinstance(item, Relation | Fact) and item.type not in filters.relation_types:
            broken.append(f"{where}: relation type {item.type}")
        for key, wanted in filters.properties.items():
            allowed = set(wanted) if isinstance(wanted, tuple) else {wanted}
            stores, value = _stored(item, key)
            if not stores:
                broken.append(f"{where}: stores no {key}")
            elif value not in allowed:
                broken.append(f"{where}: {key}={value!r}")
    return broken


def _recipe(name: str, *methods: RetrievalMethod, **steps: Any) -> RecipeConfig:
    return RecipeConfig(name=name, methods=methods, limit=30, **steps)


E, C = RetrievalMethod.ENTITY, RetrievalMethod.CHUNK
# Each method alone, and each step behind the methods it needs: (the recipe, the trace entry of the part).
PARTS: dict[str, tuple[RecipeConfig, str]] = {
    "entity": (_recipe("entity", E), "entity"),
    "chunk": (_recipe("chunk", C), "chunk"),
    "community": (_recipe("community", RetrievalMethod.COMMUNITY), "community"),
    "text2cypher": (_recipe("text2cypher", RetrievalMethod.TEXT2CYPHER), "text2cypher"),
    "ppr": (_recipe("ppr", RetrievalMethod.PPR), "ppr"),
    "fact": (_recipe("fact", RetrievalMethod.FACT), "fact"),
    "bfs": (_recipe("walk", E, bfs=True, bfs_passages=False), "bfs"),
    "bfs_passages": (_recipe("walk_passages", E, bfs=True), "bfs"),
    "community_expand": (_recipe("reports", E, community_expand=True), "community_expand"),
    "node_distance": (_recipe("distance", E, C, reranker=Reranker.NODE_DISTANCE), "rerank"),
    "cross_encoder": (_recipe("cross", E, C, reranker=Reranker.CROSS_ENCODER), "rerank"),
}
FILTERS = ("labels", "relation_types", "document_ids", "properties_chunk", "properties_entity")


def filters_named(name: str, scope: tuple[str, ...]) -> SearchFilters:
    return {
        "labels": SearchFilters(labels=("Acronym",)),  # the offline extractor's labels: Name, Acronym, Topic
        "relation_types": SearchFilters(relation_types=("RELATED_TO",)),
        "document_ids": SearchFilters(document_ids=scope),
        "properties_chunk": SearchFilters(properties={"kind": ("table", "text")}),
        "properties_entity": SearchFilters(properties={"label": "Name"}),
    }[name]


async def run_part(runtime: Runtime, part: str, filters: SearchFilters | None) -> SearchResponse | dict[str, str]:
    """The search of one part; the failures of its methods when every one of them failed."""
    recipe = PARTS[part][0]
    try:
        return await runtime.engine.search_with_trace(QUESTION, recipe, filters)
    except AllRetrievalMethodsFailedError as exc:
        return exc.failures


def test_the_declaration_covers_every_method_step_and_filter() -> None:
    from agrag.components.retrievers.filter_support import FILTER_SUPPORT, SearchFilter, refusals
    from agrag.pipelines.search_pipeline import recipe_parts

    every_part = {m.value for m in RetrievalMethod} | {"bfs", "bfs_passages", "community_expand"}
    every_part |= {r.value for r in Reranker}
    assert set(FILTER_SUPPORT) == every_part == set(PARTS)
    assert all(set(table) == set(SearchFilter) for table in FILTER_SUPPORT.values())
    assert {p for recipe, _ in PARTS.values() for p in recipe_parts(recipe)} == every_part
    # A part nobody declared is refused under any filter, never run unfiltered.
    assert "not declared" in str(refusals(["new_method"], SearchFilters(labels=("Person",)))["new_method"])


async def test_every_method_and_step_runs_without_filters(runtime: Runtime) -> None:
    for part, (_, entry) in PARTS.items():
        response = await run_part(runtime, part, None)
        assert isinstance(response, SearchResponse), f"{part}: {response}"
        statuses = {s.method: s for s in (*response.trace.methods, *response.trace.steps)}
        assert statuses[entry].ok, f"{part}: {statuses[entry].error}"


@pytest.mark.parametrize("filter_name", FILTERS)
async def test_every_method_and_step_honours_each_filter_or_refuses_it(
    runtime: Runtime, scope: tuple[str, ...], filter_name: str
) -> None:
    from agrag.components.retrievers.filter_support import FILTER_SUPPORT, SearchFilter, Support

    truth = Truth(runtime.store.graph)
    filters = filters_named(filter_name, scope)
    which = SearchFilter(filter_name.removesuffix("_chunk").removesuffix("_entity"))
    found: dict[str, int] = {}
    for part, (_, entry) in PARTS.items():
        declared = FILTER_SUPPORT[part][which].support
        response = await run_part(runtime, part, filters)
        if isinstance(response, dict):  # every method of the recipe refused or failed
            assert declared is Support.REFUSED, f"{part} x {filter_name}: declared {declared}, failed: {response}"
            assert response[entry].startswith("FilterNotHonouredError"), response
            assert part in response[entry] and which.value in response[entry], response[entry]
            continue
        statuses = {s.method: s for s in (*response.trace.methods, *response.trace.steps)}
        status = statuses[entry]
        if declared is Support.REFUSED:
            assert not status.ok and status.error.startswith("FilterNotHonouredError"), f"{part}: {status}"
            assert which.value in status.error
            assert all(entry not in r.methods for r in response.results), f"{part} refused, yet gave results"
        else:
            assert status.ok, f"{part} x {filter_name}: {status.error}"
        assert violations(response.results, filters, truth) == [], f"{part} x {filter_name}"
        found[part] = len([r for r in response.results if entry in r.methods or entry == "rerank"])
    if filter_name == "document_ids":  # not vacuous: the parts that honour a scope find things inside it
        assert all(found[p] > 0 for p in ("entity", "chunk", "ppr", "fact", "bfs", "bfs_passages", "node_distance")), (
            found
        )


def test_defect_1_text2cypher_refuses_a_document_filter(runtime: Runtime, leaky_llm: ScriptedLLM) -> None:
    """In-process: text2cypher under a document filter refuses before it asks the model, and says why."""
    team = document_ids(runtime.store.graph)["team.md"]
    before = runtime.store.graph.counts()
    asked = len(leaky_llm.requests)
    recipe = PARTS["text2cypher"][0]
    assert runtime.engine.search_sync("anything", recipe).results, "unfiltered, the leaky query runs"
    with pytest.raises(AllRetrievalMethodsFailedError) as refused:
        runtime.engine.search_sync("anything", recipe, SearchFilters(document_ids=(team,)))
    reason = refused.value.failures["text2cypher"]
    assert reason.startswith("FilterNotHonouredError") and "document_ids" in reason, reason
    assert len(leaky_llm.requests) == asked + 1, "the model was asked once, for the unfiltered search only"
    mixed = _recipe("mixed", C, RetrievalMethod.TEXT2CYPHER)
    response = runtime.engine.search_sync("Lyon site", mixed, SearchFilters(document_ids=(team,)))
    assert response.results and {r.item.document_id for r in response.results if isinstance(r.item, Chunk)} == {team}
    assert not any(isinstance(r.item, CypherRow) for r in response.results)
    assert response.trace.failures["text2cypher"].startswith("FilterNotHonouredError")
    assert runtime.store.graph.counts() == before, "nothing stored was lost"


def test_defect_1_the_cli_refuses_text2cypher_with_a_document(
    corpus: tuple[Path, Path], scope: tuple[str, ...], leaky_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``agrag search "anything" recipe=text2cypher --document X`` refuses; ``multi_hop`` keeps to X."""
    monkeypatch.setenv("AGRAG_DATA_DIR", str(corpus[1]))  # a copy: the module's runtime holds the original
    monkeypatch.setenv("AGRAG_LLM_BASE_URL", leaky_llm.base_url)
    monkeypatch.setenv("AGRAG_LLM_MAX_RETRIES", "0")
    team = scope[0]
    other_text = " ".join((EXAMPLES / "orion_planner.md").read_text().split("\n\n")[2].split())[:60]
    runner = CliRunner()
    refused = runner.invoke(app, ["search", "anything", "recipe=text2cypher", "--document", team])
    assert refused.exit_code != 0
    flat = " ".join(refused.output.split())
    assert "FilterNotHonouredError" in flat and "document_ids" in flat, refused.output
    assert other_text not in flat
    walked = runner.invoke(app, ["search", QUESTION, "recipe=multi_hop", "--document", team, "--json"])
    assert walked.exit_code == 0, walked.output
    rows = json.loads(walked.output)["results"]
    assert rows and {r["item"]["document_id"] for r in rows} == {team}


def test_defect_1_a_scoped_token_runs_what_honours_its_scope_and_is_refused_the_rest(
    runtime: Runtime, scope: tuple[str, ...]
) -> None:
    """HTTP: the scoped-token rule comes from the declaration: multi_hop and a graph walk now run inside the scope."""
    access = AccessPolicy([ApiToken("admin", ADMIN), ApiToken("team", TEAM, scope)], OWNER)
    truth = Truth(runtime.store.graph)
    with uvicorn_in_thread(create_app(runtime, access)) as url:
        import httpx

        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TEAM}"}, timeout=60) as team:
            walked = team.post("/v1/search", json={"query": QUESTION, "recipe": "multi_hop"})
            walk = {"methods": ["entity"], "bfs": True, "limit": 40}
            graph_walk = team.post("/v1/search", json={"query": QUESTION, "recipe": walk, "trace": True})
            refused = {r: team.post("/v1/search", json={"query": QUESTION, "recipe": r}) for r in ("thematic",
                       "text2cypher")}  # fmt: skip
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60) as admin:
            filtered = admin.post(
                "/v1/search",
                json={"query": "anything", "recipe": "text2cypher", "filters": {"document_ids": [scope[0]]}},
            )
    assert walked.status_code == 200, walked.text
    hits = walked.json()["hits"]
    assert hits and {h["item"]["document_id"] for h in hits} <= set(scope)
    assert graph_walk.status_code == 200, graph_walk.text
    from agrag.service.tools.search_tool import SearchOutput

    output = SearchOutput.model_validate(graph_walk.json())
    assert any(isinstance(r.item, Relation) for r in output.results()), "the walk crossed relations in scope"
    assert violations(output.results(), SearchFilters(document_ids=scope), truth) == []
    messages = {recipe: response.json() for recipe, response in refused.items()}
    assert all(r.status_code == 403 for r in refused.values()), messages
    assert "community" in messages["thematic"]["message"] and "text2cypher" in messages["text2cypher"]["message"]
    assert filtered.status_code == 400 and "FilterNotHonouredError" in filtered.json()["message"], filtered.text


@pytest.mark.parametrize("recipe", ["graph_expand", "hybrid_reranked"])
def test_r3_defect_9_a_scoped_token_runs_a_recipe_without_the_step_it_cannot_limit(
    runtime: Runtime, scope: tuple[str, ...], recipe: str
) -> None:
    """Issue 43, defect 9: graph_expand and hybrid_reranked were refused outright (403) for a token scoped to
    documents, where the README said only the community step is skipped. They now run without community_expand,
    within the scope, and the trace says why the step did not run. Failed before the fix with 403 ScopedRecipeError."""
    access = AccessPolicy([ApiToken("team", TEAM, scope)], OWNER)
    truth = Truth(runtime.store.graph)
    with uvicorn_in_thread(create_app(runtime, access)) as url:
        import httpx

        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TEAM}"}, timeout=60) as team:
            response = team.post("/v1/search", json={"query": QUESTION, "recipe": recipe, "trace": True})
    assert response.status_code == 200, response.text
    from agrag.service.tools.search_tool import SearchOutput

    output = SearchOutput.model_validate(response.json())
    assert output.hits and output.trace is not None
    assert violations(output.results(), SearchFilters(document_ids=scope), truth) == []
    assert all(hit.kind != "community" for hit in output.hits)
    (expand,) = [step for step in output.trace.steps if step.method == "community_expand"]
    assert not expand.ok and expand.count == 0
    assert "community_expand cannot keep to the document_ids filter" in expand.error
    ran = [step for step in output.trace.steps if step.method != "community_expand"]
    assert ran and all(step.ok for step in ran), output.trace.steps


ROS_A = (
    "# Middleware\n\nROS (Robot Operating System) is the middleware of the fleet. ROS runs on every robot.\n\n"
    "Teams deploy ROS nodes with Maria Chen.\n"
)
ROS_B = "# Fleet notes\n\nThe Robot Operating System runs the fleet. Omar Haddad keeps the fleet running.\n"


@pytest.fixture(scope="module")
def merged_corpus(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Iterator[Runtime]:
    """Doc A defines ROS as the Robot Operating System (resolution merges the two); doc B says only the long name."""
    root = tmp_path_factory.mktemp("merged")
    folder = root / "notes"
    folder.mkdir()
    (folder / "a.md").write_text(ROS_A)
    (folder / "b.md").write_text(ROS_B)
    with open_runtime([], settings_for(root / "data"), require_data=False, embedder=embedder) as opened:
        ingest_into(str(folder), opened.config, opened.store, embedder)
        yield opened


def test_defect_2_a_scoped_session_names_a_merged_entity_from_in_scope_text(merged_corpus: Runtime) -> None:
    graph = merged_corpus.store.graph
    before = graph.counts()
    merges = [{e.member_name, e.resolved_name} for e in graph.merge_log() if e.decision == MERGED]
    assert {"ROS", "Robot Operating System"} in merges, "resolution merged the acronym and its expansion"
    ids = document_ids(graph)
    a_doc, b_doc = ids["a.md"], ids["b.md"]

    unscoped = merged_corpus.evidence_session()
    (everywhere,) = [e for e in unscoped.find_entities("Robot Operating System", limit=10) if e.name == "ROS"]
    assert (everywhere.label, everywhere.description != "") == ("Acronym", True)

    only_b = merged_corpus.evidence_session(EvidenceScope((b_doc,)))
    found = only_b.find_entities("Robot Operating System", limit=10)
    ros = next(e for e in found if e.id == everywhere.id)
    assert (ros.name, ros.label) == ("Robot Operating System", "Name"), "B never says ROS"
    assert "ROS" not in ros.description and all(p.startswith(b_doc) for p in ros.passages)
    for entity in found:
        assert "ROS" not in repr(entity) and "Maria Chen" not in repr(entity)
    explored = only_b.explore(ros.id, depth=2)
    assert explored.entity is not None and explored.entity.name == "Robot Operating System"
    assert "ROS" not in repr(explored).replace("Robot Operating System", "")
    assert only_b.explore("ROS").entity is None, "the acronym is no name B uses"
    assert only_b.find_entities("ROS", limit=10) == () or all(e.name != "ROS" for e in only_b.find_entities("ROS"))

    only_a = merged_corpus.evidence_session(EvidenceScope((a_doc,)))
    assert [(e.name, e.label) for e in only_a.find_entities("ROS") if e.id == ros.id] == [("ROS", "Acronym")]

    engine_hits = merged_corpus.engine.search_sync(
        "Robot Operating System", _recipe("entity", E), SearchFilters(document_ids=(b_doc,))
    ).results
    entity = next(r.item for r in engine_hits if r.item.id == ros.id)
    assert isinstance(entity, Entity) and (entity.name, entity.label) == ("Robot Operating System", "Name")
    assert "ROS" not in entity.description
    context = ToolContext(ToolHost(merged_corpus), EvidenceScope((b_doc,)))
    output = TOOLS["search"].run(context, {"query": "Robot Operating System", "recipe": "entity"})
    assert [h.item.name for h in output.hits if h.item.id == ros.id] == ["Robot Operating System"]
    assert "Acronym" not in TOOLS["status"].run(context, {}).entity_labels, "B's status counts no acronym"
    assert graph.counts() == before, "nothing stored was lost"
