"""The adversarial scope suite through HTTP: a token scoped to team.md and sites.csv tries every way into the rest."""

import json
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.pipelines.runtime import Runtime
from tests.conftest import EXAMPLES
from tests.pipelines.test_evidence_scope import LeakCounter, _sentences
from tests.service.api.conftest import READABLE, SCOPE, TEAM, Served

HIDDEN = sorted(p.name for p in EXAMPLES.iterdir() if p.is_file() and p.name not in READABLE)


def strings(value: Any) -> list[str]:
    """Every string in a JSON value (keys too), white space collapsed, so no escaping hides a sentence."""
    if isinstance(value, str):
        return [" ".join(value.split())]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*strings(k), *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [str(value)]


class Seen:
    """What a response showed, as text that ``LeakCounter`` reads unescaped (its repr is the text itself)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class HttpLeaks:
    """Counts attempts and any hidden material in what the server answered (the body, parsed, and the headers)."""

    def __init__(self, counter: LeakCounter, client: httpx.Client) -> None:
        self.counter = counter
        self.client = client
        self.statuses: dict[int, int] = {}

    def call(self, what: str, method: str, path: str, body: Any = None, echoed: tuple[str, ...] = ()) -> Any:
        response = self.client.request(method, path, json=body)
        self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
        assert response.status_code < 500, f"{what}: {response.text}"
        data = response.json() if response.content else None
        seen = Seen("\n".join([*strings(data), *strings(dict(response.headers))]))
        self.counter.inspect(what, seen, echoed)
        return data


@pytest.fixture(scope="module")
def counter(served_runtime: Runtime) -> LeakCounter:
    graph = served_runtime.store.graph
    hidden_docs = {document_id_for(name, "acme_notes") for name in HIDDEN}
    readable_entities = graph.entity_ids_of_documents(list(SCOPE))
    every_entity = graph.entity_ids_of_documents([*SCOPE, *hidden_docs])
    readable_text = " ".join(" ".join((EXAMPLES / name).read_text().split()) for name in READABLE)
    sentences = [s for name in HIDDEN for s in _sentences((EXAMPLES / name).read_text()) if s not in readable_text]
    return LeakCounter(hidden_docs, sentences, set(every_entity) - set(readable_entities))


@dataclass
class Hidden:
    """What the scoped token must never see, and the ids it may try."""

    documents: list[str]
    chunk_ids: list[str]
    span_ids: list[str]
    entities: list[Entity]
    sentences: list[str]


def attack_search(leaks: HttpLeaks, hidden: Hidden) -> None:
    for sentence in hidden.sentences[:12]:
        echoed = (sentence,)  # the output names the query it answered
        runs = ("entity", "chunk", "hybrid", "graph_expand", {"methods": ["entity", "chunk"], "limit": 50})
        for recipe in runs:
            leaks.call("search", "POST", "/v1/search", {"query": sentence, "recipe": recipe, "trace": True}, echoed)
        for recipe in ("multi_hop", "thematic", "text2cypher", "hybrid_reranked"):
            leaks.call("other recipes", "POST", "/v1/search", {"query": sentence, "recipe": recipe}, echoed)
        to_hidden = {"query": sentence, "filters": {"document_ids": hidden.documents}}
        leaks.call("search filtered to hidden documents", "POST", "/v1/search", to_hidden, (*echoed, *hidden.documents))
        by_property = {
            "query": sentence,
            "recipe": "chunk",
            "filters": {"properties": {"document_id": hidden.documents[0]}},
        }
        leaks.call(
            "search with a hidden document property", "POST", "/v1/search", by_property, (*echoed, hidden.documents[0])
        )
    for entity in hidden.entities[:15]:
        body = {"query": entity.name, "recipe": "entity"}
        leaks.call("search by a hidden name", "POST", "/v1/search", body, (entity.name,))


def attack_session(leaks: HttpLeaks, base: str, hidden: Hidden) -> None:
    for sentence in hidden.sentences[:12]:
        for mode in ("keyword", "vector", "hybrid"):
            leaks.call(f"discover {mode}", "POST", f"{base}/discover", {"query": sentence, "mode": mode, "limit": 20})
    for evidence_id in [*hidden.chunk_ids, *hidden.span_ids][:60]:
        leaks.call("fetch", "POST", f"{base}/fetch", {"ids": [evidence_id]}, (evidence_id,))
    for evidence_id in hidden.chunk_ids[:20]:
        for direction in ("parent", "children", "siblings", "previous", "next"):
            body = {"id": evidence_id, "direction": direction}
            leaks.call(f"navigate {direction}", "POST", f"{base}/navigate", body, (evidence_id,))
    for entity in hidden.entities[:15]:
        leaks.call("find_entities", "POST", f"{base}/find_entities", {"query": entity.name, "limit": 20})
        leaks.call("explore by id", "POST", f"{base}/explore", {"entity": entity.id, "depth": 3}, (entity.id,))
        leaks.call("explore by name", "POST", f"{base}/explore", {"entity": entity.name, "depth": 3}, (entity.name,))
    readable = leaks.call("find entities", "POST", f"{base}/find_entities", {"query": "robots and sites", "limit": 50})
    for entity in readable:
        leaks.call("explore a readable entity", "POST", f"{base}/explore", {"entity": entity["id"], "depth": 3})
    for evidence_id in hidden.chunk_ids[:10]:
        draft = f"The planner was written in 2023 [{evidence_id}]."
        for tool in ("check_citations", "render_citations"):
            leaks.call(tool, "POST", f"{base}/{tool}", {"answer": draft}, (evidence_id,))


def test_a_scoped_token_learns_nothing_of_other_documents_through_any_route(
    served: Served, served_runtime: Runtime, counter: LeakCounter
) -> None:
    graph = served_runtime.store.graph
    documents = sorted(counter.hidden_documents)
    chunks = [c for d in documents for c in graph.get_chunks(graph.document_chunk_ids(d))]
    hidden = Hidden(
        documents,
        [str(EvidenceId.of_chunk(c)) for c in chunks],
        [str(EvidenceId(c.document_id, c.document_version, span=(c.start, c.end))) for c in chunks],
        graph.get_entities(sorted(counter.hidden_entities)),
        counter.hidden_sentences,
    )
    assert hidden.chunk_ids and hidden.entities and hidden.sentences

    with served.client(TEAM) as client:
        leaks = HttpLeaks(counter, client)
        attack_search(leaks, hidden)
        leaks.call("status", "GET", "/v1/status")
        for offset in (0, 1, 2, 5):
            leaks.call("documents", "GET", f"/v1/documents?offset={offset}&limit=50")
        leaks.call("tools", "GET", "/v1/tools")
        for path in ("/v1/merges", "/v1/merges/candidates", "/v1/ingestions"):
            leaks.call("admin route", "GET", path)
        delete = f"/v1/documents/{documents[0]}/delete"
        leaks.call("delete a hidden document", "POST", delete, {}, (documents[0],))
        over_hidden = {"documents": documents}
        empty = leaks.call("session over hidden documents", "POST", "/v1/sessions", over_hidden, tuple(documents))
        assert empty["scope"] == []
        asked = tuple(hidden.chunk_ids[:40])
        restored = leaks.call("restore hidden ids", "POST", "/v1/sessions", {"fetched": asked}, asked)
        assert restored["fetched"] == 0 and len(restored["not_restored"]) == len(asked)
        for session in (empty, restored):
            attack_session(leaks, f"/v1/sessions/{session['id']}", hidden)

    assert counter.attempts > 300, counter.attempts
    # 403: thematic and text2cypher for each of 12 sentences, and the admin routes
    assert leaks.statuses.get(200, 0) > 250 and leaks.statuses.get(403, 0) > 20
    assert counter.leaks == [], f"{len(counter.leaks)} leaks in {counter.attempts} attempts: {counter.leaks[:5]}"


def test_the_scoped_token_still_finds_its_own_documents(served: Served) -> None:
    with served.client(TEAM) as client:
        search = client.post("/v1/search", json={"query": "Who owns the Atlas Controller?"}).json()
        session = client.post("/v1/sessions", json={}).json()
        found = client.post(f"/v1/sessions/{session['id']}/discover", json={"query": "Lyon site"}).json()
    assert search["hits"] and {h["item"]["document_id"] for h in search["hits"] if h["kind"] == "chunk"} <= set(SCOPE)
    assert json.dumps(found["hits"]) and {h["id"].split(".")[0] for h in found["hits"]} <= set(SCOPE)
    assert session["scope"] == sorted(SCOPE)
