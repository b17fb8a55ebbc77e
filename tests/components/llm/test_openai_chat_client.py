import json
from pathlib import Path

import pytest

from agrag.components.errors import LLMError
from agrag.components.llm.openai_chat_client import ChatMessage, OpenAIChatClient, parse_json_object
from agrag.components.llm.sqlite_llm_cache import SqliteLLMCache
from tests.support.scripted_llm import scripted_llm

ASK = [ChatMessage("system", "Answer JSON."), ChatMessage("user", "Who wrote the Orion Planner?")]


def echo(messages: list[dict[str, str]]) -> str:
    return json.dumps({"answer": messages[-1]["content"][:10]})


def test_answers_are_parsed_and_a_server_error_is_retried() -> None:
    with scripted_llm(echo, fail_first=1) as server:
        client = OpenAIChatClient(server.base_url, "scripted", max_retries=2)
        assert client.complete_json(ASK) == {"answer": "Who wrote "}
        assert len(server.requests) == 1 and client.calls == 1


def test_a_failing_endpoint_is_a_typed_error_naming_it() -> None:
    with scripted_llm(echo, fail_first=10) as server:
        client = OpenAIChatClient(server.base_url, "scripted", max_retries=0)
        with pytest.raises(LLMError, match=r"127\.0\.0\.1.*scripted"):
            client.complete(ASK)


@pytest.mark.parametrize(
    ("answer", "parsed"),
    [('{"a": 1}', {"a": 1}), ('```json\n{"a": 1}\n```', {"a": 1}), ('Sure! {"a": 1} Hope it helps.', {"a": 1})],
)
def test_json_answers_are_read_through_fences_and_chatter(answer: str, parsed: dict[str, int]) -> None:
    assert parse_json_object(answer) == parsed


def test_a_non_object_answer_is_refused() -> None:
    with pytest.raises(LLMError, match="not JSON"):
        parse_json_object("no json here")
    with pytest.raises(LLMError, match="not an object"):
        parse_json_object("[1, 2]")


def test_the_cache_answers_a_repeated_request_without_a_call(tmp_path: Path) -> None:
    cache = SqliteLLMCache(tmp_path / "llm-cache.sqlite")
    assert not cache.path.exists(), "the file opens on first use"
    with scripted_llm(echo) as server:
        client = OpenAIChatClient(server.base_url, "scripted", cache=cache)
        first = client.complete(ASK, json_output=True)
        assert client.is_cached(ASK, json_output=True)
        assert not client.is_cached(ASK), "the answer format is part of the key"
        assert client.complete(ASK, json_output=True) == first
        other = [ChatMessage("user", "Who owns Vega Perception?")]
        client.complete(other, json_output=True)
        assert (len(server.requests), client.calls, client.cache_hits) == (2, 2, 1)
        another_model = OpenAIChatClient(server.base_url, "other-model", cache=cache)
        assert not another_model.is_cached(ASK, json_output=True)
    cache.close()

    reopened = SqliteLLMCache(tmp_path / "llm-cache.sqlite")
    with scripted_llm(echo) as server:
        client = OpenAIChatClient(server.base_url, "scripted", cache=reopened)
        assert client.complete(ASK, json_output=True) == first
        assert server.requests == [] and len(reopened) == 2


def test_a_limited_client_gives_up_after_its_timeout_and_shares_the_cache(tmp_path: Path) -> None:
    cache = SqliteLLMCache(tmp_path / "llm-cache.sqlite")
    with scripted_llm(echo) as server:
        client = OpenAIChatClient(server.base_url, "scripted", timeout_seconds=60, max_retries=3, cache=cache)
        answered = client.complete(ASK)
        limited = client.limited(0.5)
        assert (limited.timeout_seconds, limited.max_retries, limited.model) == (0.5, 0, "scripted")
        assert limited.complete(ASK) == answered and (limited.cache_hits, limited.calls) == (1, 0)
        server.hold_after_answers(0)
        with pytest.raises(LLMError, match="scripted"):
            limited.complete([ChatMessage("user", "held")])
        assert len(server.requests) == 2, "the limited client sent it once, without retries"
        assert client.calls == 1, "the counts of the client it came from are its own"
    cache.close()


@pytest.mark.parametrize(
    ("content_type", "body", "problem"),
    [
        ("text/html", b"<html>proxy login</html>", "answered no JSON"),
        ("application/json", b'{"choices": []}', "answered no text"),
        ("application/json", b'{"choices": [{"message": {"content": null}}]}', "answered no text"),
    ],
)
def test_an_endpoint_that_answers_no_completion_is_a_typed_error(content_type: str, body: bytes, problem: str) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = OpenAIChatClient(f"http://127.0.0.1:{server.server_port}/v1", "scripted", max_retries=0)
        with pytest.raises(LLMError, match=problem):
            client.complete(ASK)
    finally:
        server.shutdown()
        server.server_close()
