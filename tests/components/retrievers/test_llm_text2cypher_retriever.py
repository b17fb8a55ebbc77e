import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.search_result import SearchResult
from agrag.components.errors import LLMNotConfiguredError, Text2CypherError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.retrievers.llm_text2cypher_retriever import LLMText2CypherRetriever
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from tests.components.stores.test_kuzu_traversal import build_graph
from tests.support.scripted_llm import scripted_llm

COUNT = "MATCH (e:Entity) WHERE e.merged_into = '' RETURN count(e) AS entities"
BROKEN = "MATCH (e:Entity RETURN count(e)"


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    build_graph(store)
    yield store
    store.close()


def client(base_url: str) -> OpenAIChatClient:
    return OpenAIChatClient(base_url, model="scripted", timeout_seconds=10, max_retries=0)


def answers(*queries: str) -> Callable[[list[dict[str, str]]], str]:
    """A script that answers each request with the next query, as the JSON the prompt asks for."""
    left = list(queries)
    return lambda messages: json.dumps({"cypher": left.pop(0)})


def unpack(out: dict[str, object]) -> tuple[list[SearchResult], MethodStatus]:
    results, status = out["results"], out["status"]
    assert isinstance(results, list)
    assert isinstance(status, MethodStatus)
    return results, status


def values(result: SearchResult) -> tuple[object, ...]:
    assert isinstance(result.item, CypherRow)
    return result.item.values


def test_a_count_question_gives_a_row_with_the_count(graph: KuzuGraphStore) -> None:
    with scripted_llm(answers(COUNT)) as server:
        results, status = unpack(LLMText2CypherRetriever(graph, client(server.base_url)).run("How many entities?"))
    assert status.ok
    (result,) = results
    assert result.item == CypherRow.of(COUNT, ("entities",), (6,))
    assert (result.method, result.score) == ("text2cypher", 1.0)
    system, user = server.requests[0]["messages"]
    assert "read-only" in system["content"]
    assert "Entity(id STRING PRIMARY KEY" in user["content"]
    assert "Question: How many entities?" in user["content"]
    assert server.requests[0]["response_format"] == {"type": "json_object"}


def test_rows_are_capped_at_top_k_and_ranked_in_query_order(graph: KuzuGraphStore) -> None:
    names = "MATCH (e:Entity) RETURN e.name AS name ORDER BY name"
    with scripted_llm(answers(names)) as server:
        results, _ = unpack(LLMText2CypherRetriever(graph, client(server.base_url), top_k=3).run("List entities"))
    assert [values(r) for r in results] == [("Ada",), ("Babbage",), ("Charles Babbage",)]
    assert [r.score for r in results] == [1.0, 0.5, 1 / 3]


def test_a_broken_query_is_repaired_once_with_the_error(graph: KuzuGraphStore) -> None:
    with scripted_llm(answers(BROKEN, COUNT)) as server:
        results, status = unpack(LLMText2CypherRetriever(graph, client(server.base_url)).run("How many entities?"))
    assert status.ok
    assert [values(r) for r in results] == [(6,)]
    assert len(server.requests) == 2
    repair = server.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": json.dumps({"cypher": BROKEN})}
    assert "That query failed" in repair[-1]["content"]
    assert "Parser exception" in repair[-1]["content"]


def test_a_write_is_refused_and_repaired(graph: KuzuGraphStore) -> None:
    before = graph.counts()
    write = "MATCH (e:Entity) DETACH DELETE e"
    with scripted_llm(answers(write, COUNT)) as server:
        results, status = unpack(LLMText2CypherRetriever(graph, client(server.base_url)).run("Remove everything"))
    assert status.ok
    assert "must be read-only" in server.prompts[1]
    assert graph.counts() == before
    assert len(results) == 1


def test_two_failed_queries_fail_the_method_never_an_empty_result(graph: KuzuGraphStore) -> None:
    with scripted_llm(answers(BROKEN, "MATCH (e:Nowhere) RETURN e")) as server:
        retriever = LLMText2CypherRetriever(graph, client(server.base_url))
        results, status = unpack(retriever.run("How many entities?"))
        assert (results, status.ok, status.method) == ([], False, "text2cypher")
        assert status.error.startswith("Text2CypherError: text2cypher could not answer 'How many entities?'")
        assert "Nowhere" in status.error
    with scripted_llm(answers(BROKEN, BROKEN)) as server:
        with pytest.raises(Text2CypherError, match="failed twice"):
            LLMText2CypherRetriever(graph, client(server.base_url))._search("How many entities?", 10)
        assert len(server.requests) == 2


def test_an_answer_without_a_query_is_repaired(graph: KuzuGraphStore) -> None:
    replies = ["I cannot help with that.", json.dumps({"cypher": COUNT})]
    with scripted_llm(lambda messages: replies.pop(0)) as server:
        results, status = unpack(LLMText2CypherRetriever(graph, client(server.base_url)).run("How many?"))
    assert status.ok
    assert len(results) == 1
    assert "not JSON" in server.prompts[1]


def test_a_query_that_finds_nothing_is_an_empty_success(graph: KuzuGraphStore) -> None:
    nothing = "MATCH (e:Entity) WHERE e.name = 'Nobody' RETURN e.name AS name"
    with scripted_llm(answers(nothing)) as server:
        results, status = unpack(LLMText2CypherRetriever(graph, client(server.base_url)).run("Who is Nobody?"))
    assert (results, status.ok, status.count) == ([], True, 0)


def test_a_failing_endpoint_fails_the_method(graph: KuzuGraphStore) -> None:
    with scripted_llm(answers(COUNT), fail_first=5) as server:
        results, status = unpack(LLMText2CypherRetriever(graph, client(server.base_url)).run("How many?"))
    assert (results, status.ok) == ([], False)
    assert status.error.startswith("LLMError")


def test_without_an_llm_the_method_fails_with_how_to_configure_one(graph: KuzuGraphStore) -> None:
    retriever = LLMText2CypherRetriever(graph, None)
    with pytest.raises(LLMNotConfiguredError, match="AGRAG_LLM_BASE_URL"):
        retriever._search("How many entities?", 10)
    results, status = unpack(retriever.run("How many entities?"))
    assert (results, status.ok) == ([], False)
    assert "AGRAG_LLM_BASE_URL" in status.error


def test_the_schema_is_read_once_per_store_write(graph: KuzuGraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from agrag.components.data_models.entity import Entity

    reads: list[str] = []
    read_schema = graph._read_schema_text

    def counted() -> str:
        reads.append("schema")
        return read_schema()

    monkeypatch.setattr(graph, "_read_schema_text", counted)
    prompts: list[str] = []

    def script(messages: list[dict[str, str]]) -> str:
        prompts.append(messages[-1]["content"])
        return json.dumps({"cypher": COUNT})

    with scripted_llm(script) as server:
        retriever = LLMText2CypherRetriever(graph, client(server.base_url))
        for _ in range(2):
            assert unpack(retriever.run(query="How many entities?"))[1].ok
        assert len(reads) == 1 and prompts[0] == prompts[1]
        graph.upsert_entities([Entity("robot-1", "Kestrel Arm", "Robot")])
        assert unpack(retriever.run(query="How many entities?"))[1].ok
    assert len(reads) == 2 and "Robot" in prompts[2] and "Robot" not in prompts[0]
