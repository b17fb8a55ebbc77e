"""Limits and failures of the built-in agent: the tool-call limit, the token limit and the timeout each end a run
with a statement naming the setting; a failing LLM (HTTP 500, timeout, malformed tool calls) is retried as
configured, then reported as a typed error."""

from __future__ import annotations

import time
from typing import Any

import pytest

from agrag.components.errors import AgentLLMError, AgentLLMNotConfiguredError
from agrag.service.agent.answer import AnswerStatus
from agrag.service.agent.evidence_agent import MALFORMED_NUDGE, EvidenceAgent
from agrag.service.tools.tool import ToolHost
from tests.service.agent.conftest import QUESTION, OpenAgentRuntime, answering
from tests.support.scripted_tool_llm import Call, Reply, scripted_tool_llm, steps, tool_results


def always_searching(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
    """A model that never stops searching, each time for something else."""
    searches = len(tool_results(messages))
    return Reply(calls=(Call("search_evidence", {"query": f"Orion Planner part {searches}", "limit": 2}),))


def test_the_tool_call_limit_ends_the_run_with_a_statement(agent_runtime: OpenAgentRuntime) -> None:
    with scripted_tool_llm(always_searching) as llm, agent_runtime(llm.base_url, agent_max_tool_calls=2) as runtime:
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)
    assert result.status is AnswerStatus.TOOL_CALL_LIMIT
    assert result.text.startswith("No answer: the agent reached its limit of 2 tool calls (AGRAG_AGENT_MAX_TOOL_CALLS)")
    assert 'It searched for "Orion Planner part 0"; "Orion Planner part 1"' in result.text
    assert [r.arguments["query"] for r in result.trace] == ["Orion Planner part 0", "Orion Planner part 1"]
    assert len(llm.requests) == 3  # the third reply's call was refused, and no LLM call followed it


def test_the_token_limit_ends_the_run_with_a_statement(agent_runtime: OpenAgentRuntime) -> None:
    with scripted_tool_llm(always_searching) as llm, agent_runtime(llm.base_url, agent_max_tokens=100) as runtime:
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)
    # Each reply reports 15 tokens: the seventh reaches 105, and no eighth call is made.
    assert result.status is AnswerStatus.TOKEN_LIMIT and result.tokens == 105 and len(llm.requests) == 7
    assert result.text.startswith(
        "No answer: the run used 105 LLM tokens, reaching its limit of 100 (AGRAG_AGENT_MAX_TOKENS)"
    )


def test_the_timeout_ends_the_run_with_a_statement(agent_runtime: OpenAgentRuntime) -> None:
    with scripted_tool_llm(always_searching) as llm, agent_runtime(llm.base_url, agent_timeout_seconds=1.0) as runtime:
        llm.delay_seconds = 0.4
        started = time.monotonic()
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)
        elapsed = time.monotonic() - started
    assert result.status is AnswerStatus.TIMEOUT
    assert result.text.startswith("No answer: the run reached its time limit of 1 s (AGRAG_AGENT_TIMEOUT_SECONDS)")
    assert 1.0 <= elapsed < 2.0


def test_a_hanging_llm_call_is_cut_at_the_timeout(agent_runtime: OpenAgentRuntime) -> None:
    with scripted_tool_llm(always_searching) as llm, agent_runtime(llm.base_url, agent_timeout_seconds=1.0) as runtime:
        llm.delay_seconds = 10
        started = time.monotonic()
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)
        assert time.monotonic() - started < 2.0
    assert result.status is AnswerStatus.TIMEOUT and result.trace == ()
    assert "It made no searches." in result.text


def test_http_500_is_retried_as_configured(agent_runtime: OpenAgentRuntime) -> None:
    with scripted_tool_llm(answering, fail_first=2) as llm, agent_runtime(llm.base_url, llm_max_retries=2) as runtime:
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)
    assert result.status is AnswerStatus.ANSWERED and len(llm.requests) == 3


def test_http_500_after_the_retries_is_reported(agent_runtime: OpenAgentRuntime) -> None:
    with (
        scripted_tool_llm(answering, fail_first=3) as llm,
        agent_runtime(llm.base_url, llm_max_retries=2) as runtime,
        pytest.raises(AgentLLMError) as raised,
    ):
        EvidenceAgent(ToolHost(runtime)).ask(QUESTION)
    assert str(raised.value).startswith(f"The LLM at {llm.base_url} failed after 2 retries (AGRAG_LLM_MAX_RETRIES")
    assert "scripted failure" in str(raised.value)


def test_an_llm_timeout_after_the_retries_is_reported(agent_runtime: OpenAgentRuntime) -> None:
    settings = {"llm_max_retries": 1, "llm_timeout_seconds": 0.3}
    with scripted_tool_llm(answering) as llm, agent_runtime(llm.base_url, **settings) as runtime:
        llm.delay_seconds = 2
        with pytest.raises(AgentLLMError) as raised:
            EvidenceAgent(ToolHost(runtime)).ask(QUESTION)
    assert str(raised.value).startswith(f"The LLM at {llm.base_url} timed out after 1 retries")


def test_a_malformed_tool_call_is_retried_with_a_nudge(agent_runtime: OpenAgentRuntime) -> None:
    broken = Reply(calls=(Call("search_evidence", '{"query": "Who owns'),))
    script = steps(broken, *(lambda m, i=i: answering(m, []) for i in range(3)))
    with scripted_tool_llm(script) as llm, agent_runtime(llm.base_url) as runtime:
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)
    assert llm.requests[1]["messages"][-1] == {"role": "user", "content": MALFORMED_NUDGE}
    assert result.status is AnswerStatus.ANSWERED
    assert [r.name for r in result.trace][:2] == ["search_evidence", "fetch_evidence"]


def test_malformed_tool_calls_after_the_retries_are_reported(agent_runtime: OpenAgentRuntime) -> None:
    broken = Reply(calls=(Call("search_evidence", "{not json"),))
    with (
        scripted_tool_llm(lambda m, t: broken) as llm,
        agent_runtime(llm.base_url, llm_max_retries=2) as runtime,
        pytest.raises(AgentLLMError, match="3 replies in a row whose tool calls were not valid JSON"),
    ):
        EvidenceAgent(ToolHost(runtime)).ask(QUESTION)
    assert len(llm.requests) == 3


def test_without_an_llm_the_agent_refuses_to_start(agent_runtime: OpenAgentRuntime) -> None:
    with agent_runtime(None) as runtime, pytest.raises(AgentLLMNotConfiguredError) as raised:
        EvidenceAgent(ToolHost(runtime))
    assert "AGRAG_LLM_BASE_URL=http://localhost:11434/v1" in str(raised.value) and "ollama" in str(raised.value)
