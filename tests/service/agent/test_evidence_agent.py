"""The built-in agent driven by a scripted tool-calling LLM over the example corpus: the answer, the citation check
and its one repair, and the tools it was offered (the shared definitions, as the MCP server offers them)."""

from __future__ import annotations

from typing import Any

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.service.agent.answer import AnswerStatus, Caller
from agrag.service.agent.evidence_agent import NOT_GROUNDED, EvidenceAgent
from agrag.service.tools.registry import MCP_READ_TOOLS
from agrag.service.tools.tool import ToolHost
from tests.service.agent.conftest import QUESTION, OpenAgentRuntime
from tests.support.scripted_tool_llm import Call, Reply, scripted_tool_llm, steps, tool_results

PLANNER_DOC = document_id_for("orion_planner.md", "acme_notes")
SEARCH = Call("search_evidence", {"query": QUESTION, "mode": "hybrid", "limit": 5})


def hit(messages: list[dict[str, Any]], rank: int) -> str:
    """The id of the ``rank``-th hit of the first search in the conversation."""
    return str(tool_results(messages)[0]["hits"][rank]["id"])


def fetch_hit(rank: int) -> Any:
    return lambda messages: Reply(calls=(Call("fetch_evidence", {"ids": [hit(messages, rank)]}),))


def sequence(answer: Any) -> list[tuple[str, str, dict[str, Any]]]:
    return [(record.caller.value, record.name, record.arguments) for record in answer.trace]


def last_user(request: dict[str, Any]) -> str:
    return str([m for m in request["messages"] if m["role"] == "user"][-1]["content"])


def test_answer_cites_only_fetched_evidence_checked_and_rendered(agent_runtime: OpenAgentRuntime) -> None:
    draft: dict[str, str] = {}

    def answer(messages: list[dict[str, Any]]) -> Reply:
        draft["text"] = f"Maria Chen owns the Orion Planner [{hit(messages, 0)}]."
        return Reply(calls=(Call("check_citations", {"answer": draft["text"]}),))

    script = steps(Reply(calls=(SEARCH,)), fetch_hit(0), answer, lambda _: Reply(text=draft["text"]))
    with scripted_tool_llm(script) as llm, agent_runtime(llm.base_url) as runtime:
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)

    cited = str(EvidenceId.parse(draft["text"].split("[")[1].rstrip("].")))
    assert EvidenceId.parse(cited).document_id == PLANNER_DOC
    assert sequence(result) == [
        ("model", "search_evidence", {"query": QUESTION, "mode": "hybrid", "limit": 5}),
        ("model", "fetch_evidence", {"ids": [cited]}),
        ("model", "check_citations", {"answer": draft["text"]}),
        ("loop", "check_citations", {"answer": draft["text"]}),
        ("loop", "render_citations", {"answer": draft["text"]}),
    ]
    version = EvidenceId.parse(cited).version
    assert result.status is AnswerStatus.ANSWERED and result.grounded and not result.repaired
    assert result.text == (
        "Maria Chen owns the Orion Planner [1].\n\n"
        f"Sources:\n[1] Orion Planner Design Notes > History and Authorship (version {version})"
    )
    assert result.check is not None and result.check.cited == (cited,) and not result.check.invalid
    assert [source.id for source in result.sources] == [cited]
    assert result.llm_calls == 4 and result.tokens == 4 * 15  # the script reports 10 + 5 tokens a reply
    assert all(record.ok and record.result_chars > 0 and record.seconds >= 0 for record in result.trace)


def test_the_model_is_offered_the_shared_tool_definitions(agent_runtime: OpenAgentRuntime) -> None:
    no_answer = steps(Reply(text="[no-answer] Nothing to look for."))
    with scripted_tool_llm(no_answer) as llm, agent_runtime(llm.base_url) as runtime:
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)
    offered = {tool["function"]["name"]: tool["function"] for tool in llm.requests[0]["tools"]}
    assert list(offered) == [
        "search_evidence",
        "fetch_evidence",
        "navigate",
        "find_entities",
        "explore",
        "check_citations",
    ]
    for name, function in offered.items():
        shared = MCP_READ_TOOLS[name]
        assert function["description"] == shared.description
        assert function["parameters"] == shared.input_model.model_json_schema()
    system = llm.requests[0]["messages"][0]
    assert system["role"] == "system" and "graph" in system["content"] and "fetch" in system["content"]
    assert result.status is AnswerStatus.NO_ANSWER
    assert result.text.startswith("The documents do not answer this question. Nothing to look for.")
    assert "It made no searches." in result.text


def test_an_unfetched_citation_is_caught_and_repaired_in_one_more_turn(agent_runtime: OpenAgentRuntime) -> None:
    def two_citations(messages: list[dict[str, Any]]) -> Reply:
        first, second = hit(messages, 0), hit(messages, 1)
        return Reply(text=f"Maria Chen owns the Orion Planner [{first}] and leads the team [{second}].")

    script = steps(Reply(calls=(SEARCH,)), fetch_hit(0), two_citations, fetch_hit(1), two_citations)
    with scripted_tool_llm(script) as llm, agent_runtime(llm.base_url) as runtime:
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)

    unfetched = tool_results(llm.requests[-1]["messages"])[0]["hits"][1]["id"]
    repair_request = last_user(llm.requests[3])
    assert f"[{unfetched}] is invalid: you never fetched it" in repair_request
    assert [name for _, name, _ in sequence(result)] == [
        "search_evidence",
        "fetch_evidence",
        "check_citations",
        "fetch_evidence",
        "check_citations",
        "render_citations",
    ]
    assert result.status is AnswerStatus.ANSWERED and result.repaired
    assert result.text.startswith("Maria Chen owns the Orion Planner [1] and leads the team [2].\n\nSources:\n[1] ")
    assert len(result.sources) == 2 and len(llm.requests) == 5


def test_an_uncited_figure_is_caught_and_repaired(agent_runtime: OpenAgentRuntime) -> None:
    def uncited(messages: list[dict[str, Any]]) -> Reply:
        return Reply(
            text=f"Maria Chen wrote the Orion Planner [{hit(messages, 0)}]. The first version took six weeks in 2023."
        )

    def cited(messages: list[dict[str, Any]]) -> Reply:
        first = hit(messages, 0)
        return Reply(
            text=f"Maria Chen wrote the Orion Planner [{first}]. The first version took six weeks in 2023 [{first}]."
        )

    script = steps(Reply(calls=(SEARCH,)), fetch_hit(0), uncited, cited)
    with scripted_tool_llm(script) as llm, agent_runtime(llm.base_url) as runtime:
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)

    assert 'cites nothing: "The first version took six weeks in 2023."' in last_user(llm.requests[3])
    assert result.status is AnswerStatus.ANSWERED and result.repaired
    assert result.text.startswith(
        "Maria Chen wrote the Orion Planner [1]. The first version took six weeks in 2023 [1]."
    )
    assert result.check is not None and not result.check.uncited


def test_a_failed_repair_is_returned_not_grounded_with_the_findings(agent_runtime: OpenAgentRuntime) -> None:
    def uncited(messages: list[dict[str, Any]]) -> Reply:
        return Reply(text=f"Maria Chen wrote the Orion Planner [{hit(messages, 0)}]. It took six weeks in 2023.")

    script = steps(Reply(calls=(SEARCH,)), fetch_hit(0), uncited, uncited)
    with scripted_tool_llm(script) as llm, agent_runtime(llm.base_url) as runtime:
        result = EvidenceAgent(ToolHost(runtime)).ask(QUESTION)

    assert result.status is AnswerStatus.NOT_GROUNDED and result.repaired and not result.grounded
    assert result.text.startswith(f'{NOT_GROUNDED}\n- uncited claim: "It took six weeks in 2023."\n\n')
    assert "Maria Chen wrote the Orion Planner [1]." in result.text and "Sources:" in result.text
    assert sum("citation check found problems" in last_user(r) for r in llm.requests) == 1  # one repair only
    assert [r.name for r in result.trace if r.caller is Caller.LOOP] == [
        "check_citations",
        "check_citations",
        "render_citations",
    ]
