"""Every route of the HTTP API over real HTTP: the happy path, its typed errors, tokens, and sessions bound to them."""

import logging
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from agrag.components.data_models.evidence import EvidenceScope
from agrag.pipelines.store_status import store_status
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.tools.registry import TOOLS
from tests.service.api.conftest import ADMIN, OWNER, SCOPE, TEAM, Served

QUESTION = "Who wrote the Orion Planner?"


def error_of(response: httpx.Response, status: int, error: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == error, body
    assert "\n" not in body["message"] and "Traceback" not in response.text
    return str(body["message"])


def test_health_readiness_and_the_offline_openapi_page(served: Served) -> None:
    with served.client(None) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        assert client.get("/readyz").json() == {"status": "ready"}
        page = client.get("/docs")
        assert page.status_code == 200 and "/static-offline-docs/swagger-ui-bundle.js" in page.text
        assert "cdn" not in page.text.lower()
        assert client.get("/static-offline-docs/swagger-ui-bundle.js").status_code == 200
        schema = client.get("/openapi.json").json()
    paths = set(schema["paths"])
    assert {"/v1/search", "/v1/status", "/v1/sessions", "/v1/ingestions", "/v1/merges"} <= paths
    assert {f"/v1/sessions/{{session_id}}/{name}" for name in ("discover", "fetch", "explore")} <= paths
    search = schema["paths"]["/v1/search"]["post"]
    assert search["description"] == TOOLS["search"].description
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_search_over_http_returns_what_the_engine_returns(served: Served) -> None:
    with served.client() as client:
        response = client.post("/v1/search", json={"query": QUESTION, "recipe": "hybrid", "trace": True})
    assert response.status_code == 200, response.text
    output = TOOLS["search"].load(response.json())
    recipe = served.runtime.config_for(["recipe=hybrid"]).recipe
    assert output.results() == served.runtime.engine.search_sync(QUESTION, recipe).results
    assert output.trace is not None and output.trace.recipe == "hybrid"
    analysis = output.trace.analysis
    assert (
        analysis is not None and analysis.answer_type.value == "Person" and analysis.entity_hints == ("Orion Planner",)
    )
    assert "Maria Chen" in " ".join(h.item.text for h in output.hits if h.kind == "chunk")


def test_a_fact_search_over_http_cites_each_fact_through_its_passages(served: Served) -> None:
    with served.client() as client:
        everywhere = client.post("/v1/search", json={"query": QUESTION, "recipe": "fact"})
        scoped = client.post(
            "/v1/search", json={"query": QUESTION, "recipe": "fact", "filters": {"document_ids": [SCOPE[0]]}}
        )
    hits = everywhere.json()["hits"]
    assert hits and {h["kind"] for h in hits} == {"fact"}
    for hit in hits:
        fact = hit["item"]
        assert fact["passages"] and [p["id"] for p in fact["passages"]] == fact["chunk_ids"]
        assert all(p["current"] for p in fact["passages"])
    top = hits[0]["item"]
    assert {top["source"], top["target"]} & {"Maria Chen", "Orion Planner"}
    inside = [p["document_id"] for h in scoped.json()["hits"] for p in h["item"]["passages"]]
    assert set(inside) <= {SCOPE[0]}


def test_search_takes_an_inline_recipe_filters_and_overrides(served: Served) -> None:
    with served.client() as client:
        inline = client.post("/v1/search", json={"query": "planner", "recipe": {"methods": ["chunk"], "limit": 3}})
        filtered = client.post(
            "/v1/search", json={"query": "planner", "recipe": "chunk", "filters": {"document_ids": [SCOPE[0]]}}
        )
        tables = client.post(
            "/v1/search", json={"query": "sites", "recipe": "chunk", "filters": {"properties": {"kind": "table"}}}
        )
        overridden = client.post(
            "/v1/search", json={"query": "planner", "overrides": ["recipe=chunk", "recipe.limit=2"]}
        )
    assert [h["kind"] for h in inline.json()["hits"]] == ["chunk"] * 3
    assert {h["item"]["document_id"] for h in filtered.json()["hits"]} == {SCOPE[0]}
    assert tables.json()["hits"] and {h["item"]["kind"] for h in tables.json()["hits"]} == {"table"}
    assert len(overridden.json()["hits"]) == 2 and overridden.json()["recipe"] == "chunk"


def test_bad_search_input_gets_a_typed_one_line_error(served: Served) -> None:
    with served.client() as client:
        unknown = client.post("/v1/search", json={"query": "x", "recipe": "nope"})
        typo = client.post("/v1/search", json={"query": "x", "overrides": ["recipe.limt=3"]})
        method = client.post("/v1/search", json={"query": "x", "recipe": {"methods": ["graph"]}})
        extra = client.post("/v1/search", json={"query": "x", "trase": True})
        empty = client.post("/v1/search", json={"query": "   "})
        not_json = client.post("/v1/search", content=b"{", headers={"Content-Type": "application/json"})
    assert "hybrid" in error_of(unknown, 400, "UnknownConfigChoiceError")
    assert "limt" in error_of(typo, 400, "ConfigError")
    assert "graph" in error_of(method, 400, "UnknownRecipeMethodError")
    assert "trase" in error_of(extra, 422, "ValidationError") and extra.json()["detail"]
    assert "empty" in error_of(empty, 400, "RetrievalError")
    error_of(not_json, 422, "ValidationError")


def test_status_over_http(served: Served) -> None:
    with served.client() as client:
        status = client.get("/v1/status").json()
    with served.client(TEAM) as client:
        scoped = client.get("/v1/status").json()
    assert status["documents"] == 9 and status["scope"] is None and status["ontology"]["name"] == "open"
    assert scoped["documents"] == 2 and scoped["scope"] == sorted(SCOPE) and scoped["last_ingestion"] is None


def test_an_evidence_session_over_http(served: Served) -> None:
    with served.client() as client:
        created = client.post("/v1/sessions", json={})
        assert created.status_code == 201 and created.json()["scope"] is None
        session = f"/v1/sessions/{created.json()['id']}"
        hits = client.post(f"{session}/discover", json={"query": QUESTION, "limit": 3}).json()["hits"]
        ids = [hit["id"] for hit in hits]
        fetched = client.post(f"{session}/fetch", json={"ids": [*ids, f"{ids[0][:-2]}c999"]}).json()
        around = [
            client.post(f"{session}/navigate", json={"id": ids[0], "direction": direction}).json()
            for direction in ("previous", "next")
        ]
        entities = client.post(f"{session}/find_entities", json={"query": "Orion Planner"}).json()
        explored = client.post(f"{session}/explore", json={"entity": entities[0]["id"], "depth": 2}).json()
        answer = f"Maria Chen wrote the Orion Planner [{ids[0]}]. It has 3 parts [dzz.0123456789ab.c1]."
        checked = client.post(f"{session}/check_citations", json={"answer": answer}).json()
        rendered = client.post(f"{session}/render_citations", json={"answer": answer}).json()
        info = client.get(session).json()
        assert client.delete(session).status_code == 204
        gone = client.post(f"{session}/discover", json={"query": QUESTION})
    assert [item["id"] for item in fetched["items"]] == ids and fetched["not_found"] == [f"{ids[0][:-2]}c999"]
    assert around[0]["items"] + around[1]["items"] and entities[0]["name"] == "Orion Planner" and explored["edges"]
    facts = [f for e in entities for f in e["facts"]]
    assert facts and all(" -[" in f["fact"] and f["passages"] for f in facts), "find_entities carries facts over HTTP"
    assert checked["cited"] == [ids[0]] and checked["invalid"][0]["reason"] == "not_fetched"
    assert rendered["text"].startswith("Maria Chen wrote the Orion Planner [1].") and rendered["sources"]
    assert info["fetched"] >= len(ids)
    error_of(gone, 404, "SessionNotFoundError")


def test_a_session_restored_from_earlier_ids_accepts_their_citations(served: Served) -> None:
    with served.client() as client:
        first = client.post("/v1/sessions", json={}).json()["id"]
        ids = [h["id"] for h in client.post(f"/v1/sessions/{first}/discover", json={"query": QUESTION}).json()["hits"]]
        client.post(f"/v1/sessions/{first}/fetch", json={"ids": ids[:2]})
        restored = client.post("/v1/sessions", json={"fetched": [*ids[:2], "dzz.0123456789ab.c1"]}).json()
        check = client.post(f"/v1/sessions/{restored['id']}/check_citations", json={"answer": f"It [{ids[1]}]."})
        malformed = client.post("/v1/sessions", json={"fetched": ["not an id"]})
    assert restored["fetched"] == 2 and restored["not_restored"] == ["dzz.0123456789ab.c1"]
    assert check.json()["cited"] == [ids[1]]
    assert "is not an evidence id" in error_of(malformed, 400, "EvidenceError")


def test_session_tool_errors_are_typed(served: Served) -> None:
    with served.client() as client:
        session = f"/v1/sessions/{client.post('/v1/sessions', json={}).json()['id']}"
        bad_id = client.post(f"{session}/fetch", json={"ids": ["d1.zz.c0"]})
        limit = client.post(f"{session}/discover", json={"query": "x", "limit": 0})
        cells = client.post(
            f"{session}/navigate", json={"id": _first_text_chunk(client, session), "direction": "cells"}
        )
        unknown_tool = client.post(f"{session}/summarize", json={})
    assert "evidence id" in error_of(bad_id, 400, "EvidenceError")
    assert "limit" in error_of(limit, 422, "ValidationError")
    assert "not in a table" in error_of(cells, 400, "EvidenceError")
    error_of(unknown_tool, 404, "NotFound")


def _first_text_chunk(client: httpx.Client, session: str) -> str:
    hits = client.post(f"{session}/discover", json={"query": "Maria Chen wrote the planner"}).json()["hits"]
    return str(hits[0]["id"])


def _request_lines(caplog: pytest.LogCaptureFixture, count: int, seconds: float = 10.0) -> str:
    """Every captured message, once the server logged ``count`` request lines.

    The server logs a request after its response is sent, from its own thread: under load the client can read the
    last answer before that line is written.
    """
    deadline = time.monotonic() + seconds
    while sum(r.name == "agrag.service.api.requests" for r in caplog.records) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return "\n".join(r.getMessage() for r in caplog.records)


def test_tokens_are_required_checked_and_never_echoed(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    wrong = "wrong-token-0123456789abcdef"
    with caplog.at_level(logging.INFO), served.client(None) as client:
        missing = client.get("/v1/status")
        bad = client.get("/v1/status", headers={"Authorization": f"Bearer {wrong}"})
        basic = client.get("/v1/status", headers={"Authorization": f"Basic {wrong}"})
        owner = client.get("/v1/status", headers={"Authorization": f"Bearer {OWNER}"})
        logged = _request_lines(caplog, 4)  # inside at_level: a line logged after it ends would not be captured
    assert "Authorization: Bearer" in error_of(missing, 401, "AuthenticationError")
    assert missing.headers["www-authenticate"] == "Bearer"
    error_of(bad, 401, "AuthenticationError")
    error_of(basic, 401, "AuthenticationError")
    assert owner.status_code == 200
    for response in (missing, bad, basic):
        assert wrong not in response.text
    assert "GET /v1/status 401" in logged and "GET /v1/status 200" in logged and " owner" in logged
    for secret in (wrong, OWNER, ADMIN, TEAM):
        assert secret not in logged
    policy = served_access()
    assert OWNER not in repr(policy) and ADMIN not in repr(policy._tokens)


def served_access() -> AccessPolicy:
    return AccessPolicy([ApiToken("admin", ADMIN), ApiToken("team", TEAM, SCOPE)], OWNER)


def test_a_session_is_bound_to_the_token_that_made_it(served: Served) -> None:
    with served.client(ADMIN) as admin, served.client(TEAM) as team, served.client(OWNER) as owner:
        session = admin.post("/v1/sessions", json={}).json()["id"]
        unknown = team.post("/v1/sessions/sUnknown/discover", json={"query": QUESTION})
        others = [
            team.post(f"/v1/sessions/{session}/discover", json={"query": QUESTION}),
            owner.post(f"/v1/sessions/{session}/discover", json={"query": QUESTION}),
        ]
        read, deleted = team.get(f"/v1/sessions/{session}"), team.delete(f"/v1/sessions/{session}")
        mine = admin.post(f"/v1/sessions/{session}/discover", json={"query": QUESTION})
    unknown_message = error_of(unknown, 404, "SessionNotFoundError").replace("sUnknown", "ID")
    for response in (*others, read, deleted):
        assert error_of(response, 404, "SessionNotFoundError").replace(session, "ID") == unknown_message
    assert mine.status_code == 200 and mine.json()["hits"]


def test_a_scoped_token_gets_403_on_admin_routes_and_refused_recipes(served: Served) -> None:
    with served.client(TEAM) as team:
        responses = [
            team.get("/v1/merges"),
            team.get("/v1/merges/candidates"),
            team.post("/v1/merges/m1/undo"),
            team.get("/v1/ingestions"),
            team.post("/v1/ingestions", json={"folder": "."}),
            team.post(f"/v1/documents/{SCOPE[0]}/delete", json={}),
        ]
        recipe = team.post("/v1/search", json={"query": "x", "recipe": "thematic"})
    for response in responses:
        assert "limited to some documents" in error_of(response, 403, "ForbiddenError")
    assert "uses community, which" in error_of(recipe, 403, "ScopedRecipeError")


def test_the_merge_log_routes(served: Served) -> None:
    with served.client() as client:
        merges = client.get("/v1/merges")
        candidates = client.get("/v1/merges/candidates")
        undo = client.post("/v1/merges/nothing-merged/undo")
    assert merges.status_code == 200 and isinstance(merges.json(), list)
    assert candidates.status_code == 200 and isinstance(candidates.json(), list)
    assert "agrag merges list" in error_of(undo, 404, "MergeNotFoundError")


def test_twenty_concurrent_searches_answer_as_one_does(served: Served) -> None:
    questions = [QUESTION, "What caused the replanning storm in Lyon?", "Who owns the Atlas Controller?", "lidar"]
    recipes = ["hybrid", "multi_hop", "graph_expand", "chunk"]
    asks = [{"query": q, "recipe": r} for q in questions for r in recipes]
    with served.client() as client:
        expected = {(a["query"], a["recipe"]): client.post("/v1/search", json=a).json()["hits"] for a in asks}

        def ask(i: int) -> bool:
            body = asks[i % len(asks)]
            response = client.post("/v1/search", json=body)
            return response.status_code == 200 and response.json()["hits"] == expected[(body["query"], body["recipe"])]

        with ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(ask, range(100)))
    assert all(answers)


def test_a_body_too_large_is_refused_whole(served: Served) -> None:
    big = b'{"query": "' + b"x" * (2 * 1024 * 1024) + b'"}'

    def streamed() -> Iterator[bytes]:
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536]

    with served.client() as client:
        declared = client.post("/v1/search", content=big, headers={"Content-Type": "application/json"})
        chunked = client.post("/v1/search", content=streamed(), headers={"Content-Type": "application/json"})
    assert "1024 KiB" in error_of(declared, 413, "PayloadTooLargeError")
    assert "1024 KiB" in error_of(chunked, 413, "PayloadTooLargeError")


def test_the_documents_route_lists_committed_documents_within_the_tokens_scope(served: Served) -> None:
    with served.client() as http:
        listed = http.get("/v1/documents").json()
        assert len(listed) == 9
        assert [d["source_path"] for d in listed] == sorted(d["source_path"] for d in listed)
        committed = served.runtime.store.graph.document_versions([d["id"] for d in listed])
        assert {d["id"]: d["version"] for d in listed} == committed
        page = http.get("/v1/documents", params={"offset": 2, "limit": 3}).json()
        assert page == listed[2:5]
        bad = http.get("/v1/documents", params={"limit": 0})
        assert bad.status_code == 422 and "limit" in bad.json()["message"]
    with served.client(TEAM) as http:
        assert sorted(d["id"] for d in http.get("/v1/documents").json()) == sorted(SCOPE)


def test_every_listed_tool_has_a_route_and_the_ontology_route_answers_within_the_scope(served: Served) -> None:
    with served.client() as http:
        listed = http.get("/v1/tools").json()
        schema = http.get("/openapi.json").json()
        ontology = http.get("/v1/ontology").json()
    with served.client(TEAM) as http:
        scoped = http.get("/v1/ontology").json()
    operations = {operation["operationId"] for path in schema["paths"].values() for operation in path.values()}
    assert {tool["name"] for tool in listed} == set(TOOLS) and set(TOOLS) <= operations
    assert schema["paths"]["/v1/ontology"]["get"]["description"] == TOOLS["get_ontology"].description
    everything = store_status(served.runtime.store, None, None)
    assert everything.ontology is not None and ontology["name"] == everything.ontology.name == "open"
    assert ontology["entity_labels"] == list(everything.ontology.entity_labels)
    mine = store_status(served.runtime.store, EvidenceScope(SCOPE), None)
    assert ontology["stored_entity_labels"] == dict(everything.entity_labels)
    assert scoped["stored_entity_labels"] == dict(mine.entity_labels) != ontology["stored_entity_labels"]
    assert scoped["stored_relation_types"] == dict(mine.relation_types)
    assert scoped["entity_labels"] == ontology["entity_labels"]
