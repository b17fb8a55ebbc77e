"""``LLMQueryAnalyzer`` against the scripted OpenAI-protocol LLM: its answer when good, the rules' when not."""

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from haystack import Pipeline

from agrag.components.data_models.query_analysis import AnswerType, QueryAnalyzerKind
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.llm.sqlite_llm_cache import SqliteLLMCache
from agrag.components.retrievers.llm_query_analyzer import LLMQueryAnalyzer, analysis_of, prompt_for
from tests.support.scripted_llm import scripted_llm

QUESTION = "Which company is the Orion Planner supplied by?"
GOOD = {
    "answer_type_keywords": ["ORGANIZATION", "PERSON"],
    "entities_from_query": ["Orion Planner", "orion planner", " "],
    "relation_keywords": ["Supplied by", "supplies"],
}


def answering(answer: object) -> Callable[[list[dict[str, str]]], str]:
    return lambda messages: answer if isinstance(answer, str) else json.dumps(answer)


def client(base_url: str, cache: SqliteLLMCache | None = None) -> OpenAIChatClient:
    return OpenAIChatClient(base_url, model="scripted", timeout_seconds=30, max_retries=3, cache=cache)


def test_the_llm_answer_becomes_the_analysis_in_the_rules_forms() -> None:
    with scripted_llm(answering(GOOD)) as server:
        analysis = LLMQueryAnalyzer(client(server.base_url)).analyze(QUESTION)
    assert analysis.analyzer is QueryAnalyzerKind.LLM and analysis.error == ""
    assert analysis.answer_type is AnswerType.ORGANIZATION
    assert analysis.entity_hints == ("Orion Planner",)
    assert analysis.relation_keywords == ("supplies",)
    (request,) = server.requests
    prompt = request["messages"][-1]["content"]
    assert f"Query: {QUESTION}\nOutput:" in prompt
    assert "'Quantity': ['€4,850'" in prompt and '"relation_keywords"' in prompt
    assert request["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("I cannot help with that.", r"^LLMError: The LLM answered something that is not JSON"),
        (
            {"answer_type_keywords": ["Place"], "entities_from_query": "x"},
            r"^QueryAnalysisError: .*'relation_keywords'",
        ),
        ({**GOOD, "entities_from_query": [{"name": "Orion"}]}, r"^QueryAnalysisError: .*list of strings.*RETRIEVAL_"),
    ],
)
def test_an_answer_that_is_not_the_json_asked_for_falls_back_to_the_rules(answer: object, error: str) -> None:
    with scripted_llm(answering(answer)) as server:
        analysis = LLMQueryAnalyzer(client(server.base_url)).analyze(QUESTION)
    assert analysis.analyzer is QueryAnalyzerKind.RULES
    assert analysis.entity_hints == ("Orion Planner",) and analysis.relation_keywords == ("supplies",)
    assert analysis.answer_type is AnswerType.ORGANIZATION
    assert analysis.elapsed_ms > 0
    assert re.search(error, analysis.error), analysis.error


def test_a_failing_endpoint_is_asked_once_and_the_rules_answer() -> None:
    with scripted_llm(answering(GOOD), fail_first=5) as server:
        analysis = LLMQueryAnalyzer(client(server.base_url)).analyze(QUESTION)
        assert server.failures_left == 4, "no retries: a search waits for this call"
    assert analysis.analyzer is QueryAnalyzerKind.RULES
    assert analysis.error.startswith("LLMError: The LLM at http://127.0.0.1")


def test_a_slow_endpoint_is_given_up_after_the_timeout() -> None:
    with scripted_llm(answering(GOOD)) as server:
        server.hold_after_answers(0)
        started = time.perf_counter()
        analysis = LLMQueryAnalyzer(client(server.base_url), timeout_seconds=0.5).analyze(QUESTION)
        waited = time.perf_counter() - started
    assert analysis.analyzer is QueryAnalyzerKind.RULES and "timed out" in analysis.error.lower()
    assert waited < 5


def test_without_an_llm_the_rules_answer_and_say_why() -> None:
    analysis = LLMQueryAnalyzer(None).analyze(QUESTION)
    assert analysis.analyzer is QueryAnalyzerKind.RULES
    assert analysis.error.startswith("LLMNotConfiguredError: Query analysis with RETRIEVAL_QUERY_ANALYZER=llm needs")


def test_a_question_asked_again_is_answered_from_the_cache(tmp_path: Path) -> None:
    cache = SqliteLLMCache(tmp_path / "llm-cache.sqlite")
    with scripted_llm(answering(GOOD)) as server:
        analyzer = LLMQueryAnalyzer(client(server.base_url, cache))
        first, second = analyzer.analyze(QUESTION), analyzer.analyze(QUESTION)
    assert len(server.requests) == 1
    assert (first.entity_hints, first.analyzer) == (second.entity_hints, second.analyzer)
    cache.close()


def test_it_serializes_with_its_client_settings_and_runs_in_a_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGRAG_LLM_API_KEY", "secret")
    with scripted_llm(answering(GOOD)) as server:
        pipeline = Pipeline()
        pipeline.add_component("analysis", LLMQueryAnalyzer(client(server.base_url), timeout_seconds=7.0))
        text = pipeline.dumps()
        assert "secret" not in text and "timeout_seconds: 7.0" in text and server.base_url in text
        loaded = Pipeline.loads(text, allowed_modules=["agrag"])
        analysis = loaded.run({"analysis": {"query": QUESTION}})["analysis"]["analysis"]
    assert analysis.analyzer is QueryAnalyzerKind.LLM
    assert server.requests[0]["model"] == "scripted"


@pytest.mark.parametrize(
    ("keywords", "expected"),
    [
        (["GEO"], AnswerType.PLACE),
        (["DATE AND TIME"], AnswerType.DATE),
        (["FOOD", "person"], AnswerType.PERSON),
        ([], AnswerType.UNKNOWN),
    ],
)
def test_answer_type_names_models_use_are_mapped(keywords: list[str], expected: AnswerType) -> None:
    data = {"answer_type_keywords": keywords, "entities_from_query": [], "relation_keywords": []}
    assert analysis_of(data).answer_type is expected


def test_the_prompt_is_ragflows_with_our_types() -> None:
    prompt = prompt_for("Who owns Vega Perception?")
    assert prompt.startswith("---Role---") and "answer_type_keywords" in prompt and "entities_from_query" in prompt
    assert "{" not in prompt.split("-Real Data-")[1].split("Answer type pool:")[0]
    assert prompt.rstrip().endswith("Query: Who owns Vega Perception?\nOutput:")
