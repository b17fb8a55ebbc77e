"""The tool definitions: complete for a model and a person, strict inputs, and outputs that survive JSON exactly."""

import json
from typing import Any

import pytest
from pydantic import ValidationError

from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.data_models.search_result import SearchResult
from agrag.components.errors import ConfigError
from agrag.pipelines.runtime import Runtime
from agrag.service.tools.errors import OverrideNotAllowedError, ScopedRecipeError
from agrag.service.tools.registry import SESSION_TOOLS, TOOLS
from agrag.service.tools.search_tool import SearchOutput, hit_of, result_of
from agrag.service.tools.tool import ToolContext, ToolHost
from tests.service.api.conftest import SCOPE

OFFLINE_RECIPES = ("entity", "chunk", "hybrid", "graph_expand", "thematic", "multi_hop", "bridge", "fact")


def through_json(data: Any) -> Any:
    return json.loads(json.dumps(data))


def test_every_tool_is_described_for_a_model_and_a_person() -> None:
    assert list(TOOLS) == [
        "search",
        "discover",
        "fetch",
        "navigate",
        "find_entities",
        "explore",
        "check_citations",
        "render_citations",
        "status",
        "list_documents",
        "search_evidence",
        "get_ontology",
    ]
    assert set(SESSION_TOOLS) == set(TOOLS) - {"search", "status", "list_documents", "get_ontology"}
    for tool in TOOLS.values():
        assert tool.title and len(tool.description) > 200, tool.name
        assert "Cost" in tool.description or "cost" in tool.description, tool.name
        assert tool.input_model.model_config.get("extra") == "forbid", tool.name
        for name, field in tool.input_model.model_fields.items():
            assert field.description, f"{tool.name}.{name} has no description"


def test_inputs_refuse_unknown_fields_and_values_outside_the_session_limits() -> None:
    with pytest.raises(ValidationError, match="Extra inputs"):
        TOOLS["discover"].parse({"query": "planner", "lmit": 5})
    with pytest.raises(ValidationError, match="less than or equal to 100"):
        TOOLS["discover"].parse({"query": "planner", "limit": 101})
    with pytest.raises(ValidationError, match="less than or equal to 3"):
        TOOLS["explore"].parse({"entity": "Orion Planner", "depth": 4})
    with pytest.raises(ValidationError, match="direction"):
        TOOLS["navigate"].parse({"id": "d1.abcdef.c0", "direction": "sideways"})
    with pytest.raises(ValidationError, match="at least 1"):
        TOOLS["fetch"].parse({"ids": []})
    with pytest.raises(ValidationError, match="pattern"):
        TOOLS["search"].parse({"query": "x", "recipe": "hybrid recipe.limit=1"})


def test_search_hits_round_trip_to_the_exact_results_of_every_offline_recipe(served_runtime: Runtime) -> None:
    host = ToolHost(served_runtime)
    search = TOOLS["search"]
    kinds: set[str] = set()
    for recipe in OFFLINE_RECIPES:
        output = search.run(
            ToolContext(host), {"query": "Who wrote the Orion Planner?", "recipe": recipe, "trace": True}
        )
        engine = served_runtime.engine.search_sync("Who wrote the Orion Planner?", host.recipe([f"recipe={recipe}"]))
        assert output.results() == engine.results, recipe
        back = search.load(through_json(search.dump(output)))
        assert isinstance(back, SearchOutput)
        assert back.results() == engine.results, recipe
        assert back.trace is not None and back.trace == output.trace
        kinds |= {hit.kind for hit in back.hits}
    assert kinds == {"entity", "chunk", "relation", "community", "fact"}


def test_a_graph_query_row_round_trips_too(served_runtime: Runtime) -> None:
    query = "MATCH (e:Entity) RETURN e.name, e.label, e LIMIT 3"
    columns, rows = served_runtime.store.graph.run_read_only(query)
    results = [SearchResult(CypherRow.of(query, tuple(columns), tuple(row)), 1.0, "text2cypher") for row in rows]
    hits = [hit_of(r) for r in results]
    assert [h.kind for h in hits] == ["row"] * 3
    output = SearchOutput.of("q", "text2cypher", results, None)
    back = TOOLS["search"].load(through_json(TOOLS["search"].dump(output)))
    assert back.results() == results
    assert [result_of(h) for h in hits] == results


def test_every_evidence_output_round_trips_through_json(served_runtime: Runtime) -> None:
    session = served_runtime.evidence_session()
    context = ToolContext(ToolHost(served_runtime), session=session)
    found = TOOLS["discover"].run(context, {"query": "Who wrote the Orion Planner?", "limit": 5})
    ids = [hit.id for hit in found.hits]
    entities = TOOLS["find_entities"].run(context, {"query": "Orion Planner"})
    calls = {
        "discover": found,
        "fetch": TOOLS["fetch"].run(context, {"ids": ids}),
        "navigate": TOOLS["navigate"].run(context, {"id": ids[0], "direction": "parent"}),
        "find_entities": entities,
        "explore": TOOLS["explore"].run(context, {"entity": entities[0].id, "depth": 2}),
        "check_citations": TOOLS["check_citations"].run(context, {"answer": f"Maria Chen wrote it [{ids[0]}]."}),
        "render_citations": TOOLS["render_citations"].run(context, {"answer": f"Maria Chen wrote it [{ids[0]}]."}),
        "status": TOOLS["status"].run(context, {}),
    }
    assert found.hits and entities and calls["explore"].edges and calls["check_citations"].cited
    assert any(e.facts for e in entities), "find_entities gives the facts passages state about an entity"
    for name, output in calls.items():
        tool = TOOLS[name]
        assert tool.load(through_json(tool.dump(output))) == output, name


def test_status_counts_the_graph_and_names_its_ontology(served_runtime: Runtime) -> None:
    status = TOOLS["status"].run(ToolContext(ToolHost(served_runtime)), {})
    assert status.documents == 9 and status.chunks > status.documents
    assert status.entities == sum(status.entity_labels.values()) > 0
    assert status.relations == sum(status.relation_types.values()) > 0
    assert status.communities and status.generation
    assert status.ontology is not None and status.ontology.name == "open"
    scoped = TOOLS["status"].run(ToolContext(ToolHost(served_runtime), EvidenceScope(SCOPE)), {})
    assert scoped.scope == tuple(sorted(SCOPE)) and scoped.documents == 2
    assert 0 < scoped.entities < status.entities and scoped.communities is None


def test_a_scoped_search_refuses_what_it_cannot_limit_and_blanks_entity_descriptions(served_runtime: Runtime) -> None:
    context = ToolContext(ToolHost(served_runtime), EvidenceScope(SCOPE))
    for recipe, refused in (("text2cypher", "text2cypher"), ("thematic", "community")):
        with pytest.raises(ScopedRecipeError, match=refused):
            TOOLS["search"].run(context, {"query": "robots", "recipe": recipe})
    inline = {"methods": ["entity", "chunk"], "community_expand": True}
    for recipe in ("graph_expand", inline):  # the step that reads every document is skipped, the rest runs
        output = TOOLS["search"].run(context, {"query": "robots", "recipe": recipe, "trace": True})
        assert output.trace is not None and output.hits
        (expand,) = [step for step in output.trace.steps if step.method == "community_expand"]
        assert not expand.ok and "FilterNotHonouredError: community_expand" in str(expand.error)
        assert all(hit.kind != "community" for hit in output.hits)
    output = TOOLS["search"].run(context, {"query": "Who owns the Atlas Controller?", "recipe": "entity"})
    assert output.hits and all(hit.kind == "entity" and hit.item.description == "" for hit in output.hits)
    # Nothing is readable outside the scope: no result, never an unfiltered search.
    outside = {"query": "planner", "recipe": "chunk", "filters": {"document_ids": ["dnothere"]}}
    assert TOOLS["search"].run(context, outside).hits == ()
    inside = {"query": "planner", "recipe": "chunk", "filters": {"document_ids": [SCOPE[0], "dnothere"]}}
    assert {hit.item.document_id for hit in TOOLS["search"].run(context, inside).hits} == {SCOPE[0]}


def test_search_overrides_are_recipe_keys_only(served_runtime: Runtime) -> None:
    context = ToolContext(ToolHost(served_runtime))
    five = TOOLS["search"].run(context, {"query": "planner", "recipe": "chunk", "overrides": ["recipe.limit=2"]})
    assert len(five.hits) == 2
    with pytest.raises(OverrideNotAllowedError, match="recipe overrides only"):
        TOOLS["search"].run(context, {"query": "planner", "overrides": ["vector_store=qdrant"]})
    with pytest.raises(OverrideNotAllowedError, match="recipe object"):
        TOOLS["search"].run(context, {"query": "x", "recipe": {"methods": ["chunk"]}, "overrides": ["recipe.limit=2"]})
    with pytest.raises(ConfigError, match="limit"):
        TOOLS["search"].run(context, {"query": "planner", "overrides": ["recipe.limit=0"]})
