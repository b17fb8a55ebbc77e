"""Scope: an agent limited to two documents calls every tool, the graph mode included, with queries about what only
the other documents say, and asks for an out-of-scope passage by id; no recorded tool result names an id or holds a
passage that only documents outside the scope have.

The corpus is adversarial for scope: its documents share entities (Maria Chen, the Orion Planner), so a leak through
an entity, a relation or the graph walk would show. The oracle (``tests/service/mcp/test_scope.py``) reads the graph
without any scope.
"""

from __future__ import annotations

from typing import Any

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.evidence import EvidenceScope
from agrag.service.agent.answer import AnswerStatus, Caller
from agrag.service.agent.evidence_agent import EvidenceAgent
from agrag.service.tools.tool import ToolHost
from tests.service.agent.conftest import OpenAgentRuntime
from tests.service.mcp.test_scope import Oracle
from tests.support.scripted_tool_llm import Call, Reply, scripted_tool_llm, steps, tool_results

SCOPE = tuple(sorted(document_id_for(name, "acme_notes") for name in ("team.md", "sites.csv")))


def first_hit(messages: list[dict[str, Any]]) -> str:
    return str(tool_results(messages)[0]["hits"][0]["id"])


def test_a_scoped_agent_never_receives_out_of_scope_text(agent_runtime: OpenAgentRuntime) -> None:
    with agent_runtime(None) as runtime:
        oracle = Oracle.of(runtime, SCOPE)
        outside = runtime.store.graph.get_chunks(
            [
                c
                for d in {i.split(".")[0] for i in oracle.out_of_scope_chunks}
                for c in runtime.store.graph.document_chunk_ids(d)
            ]
        )
        inside_text = " ".join(
            c.text
            for c in runtime.store.graph.get_chunks(
                [c for d in SCOPE for c in runtime.store.graph.document_chunk_ids(d)]
            )
        )
    leaky_sentences = {
        sentence.strip()
        for chunk in outside
        for sentence in chunk.text.replace("\n", " ").split(". ")
        if len(sentence.strip()) > 30 and sentence.strip() not in inside_text.replace("\n", " ")
    }
    assert len(leaky_sentences) >= 10
    stranger = oracle.out_of_scope_chunks[0]
    script = steps(
        Reply(calls=(Call("search_evidence", {"query": "Who wrote the Orion Planner?", "limit": 20}),)),
        Reply(
            calls=(
                Call(
                    "search_evidence",
                    {"query": "Who owns what the Orion Planner depends on?", "mode": "graph", "limit": 20},
                ),
            )
        ),
        Reply(calls=(Call("search_evidence", {"query": "grid-based planner six weeks pilot", "mode": "keyword"}),)),
        Reply(calls=(Call("find_entities", {"query": "Orion Planner", "limit": 20}),)),
        Reply(calls=(Call("explore", {"entity": "Orion Planner", "depth": 3}),)),
        lambda m: Reply(calls=(Call("fetch_evidence", {"ids": [first_hit(m), stranger]}),)),
        lambda m: Reply(calls=(Call("navigate", {"id": first_hit(m), "direction": "siblings"}),)),
        lambda m: Reply(text=f"Maria Chen owns the Orion Planner [{first_hit(m)}]."),
    )
    with scripted_tool_llm(script) as llm, agent_runtime(llm.base_url) as runtime:
        result = EvidenceAgent(ToolHost(runtime), EvidenceScope(SCOPE)).ask("Who wrote the Orion Planner?")

    model_calls = [r for r in result.trace if r.caller is Caller.MODEL]
    assert [r.name for r in model_calls] == [
        "search_evidence",
        "search_evidence",
        "search_evidence",
        "find_entities",
        "explore",
        "fetch_evidence",
        "navigate",
    ]
    assert all(r.ok for r in model_calls)
    for record in result.trace:
        oracle.check(record.result, record.arguments, f"{record.name}({record.arguments})")
        leaked = [s for s in leaky_sentences if s in record.result.replace("\\n", " ")]
        assert not leaked, f"{record.name} returned out-of-scope text: {leaked[:2]}"
    fetched = tool_results(llm.requests[-1]["messages"])[5]
    assert fetched["not_found"] == [stranger] and fetched["items"][0]["id"].split(".")[0] in SCOPE
    assert result.status is AnswerStatus.ANSWERED
    assert all(source.id.split(".")[0] in SCOPE for source in result.sources)
