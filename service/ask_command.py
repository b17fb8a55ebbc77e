"""``agrag ask``: answer a question with the built-in agent; every citation is checked before it is shown."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

import typer

from agrag.service.cli_support import Overrides, console, fail, on_data_dir

MAX_TRACE_ARGUMENT_CHARS = 160


def ask(
    question: Annotated[str, typer.Argument(help="The question, in your own words.")],
    overrides: Overrides = None,
    *,
    document: Annotated[
        list[str] | None,
        typer.Option("--document", help="Only this document id may be read (repeat). Default: every document."),
    ] = None,
    trace: Annotated[
        bool, typer.Option("--trace", help="Print each tool call as it happens: arguments, result size and time.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the answer, its sources and its tool calls as JSON.")
    ] = False,
) -> None:
    """Answer a question from your documents with an LLM that searches, reads and cites them.

    Needs an OpenAI-compatible endpoint with tool calling (AGRAG_LLM_BASE_URL, AGRAG_LLM_MODEL). The answer cites
    numbered sources; its citations were checked against the passages the agent read.
    """
    from agrag.components.errors import AgentLLMNotConfiguredError, AgragError
    from agrag.pipelines.settings import load_settings
    from agrag.service.server.server_file import find_server

    try:
        settings = load_settings().agrag
        # A server that holds the data dir answers with its own LLM settings (and refuses if it has none).
        if not settings.llm_base_url and find_server(settings.data_dir) is None:
            raise AgentLLMNotConfiguredError()
    except AgragError as exc:
        fail(exc)
    run = _Ask(question, document, show_calls=trace and not as_json)
    answer = on_data_dir(overrides, run.in_process, lambda server: _guarded(run.served, server))
    if as_json:
        console.print_json(json.dumps({**answer, "trace": run.calls}, ensure_ascii=False))
        return
    console.print(answer["text"], markup=False, highlight=False, soft_wrap=True)
    if trace:
        console.print(_summary(answer), markup=False, highlight=False, style="dim", soft_wrap=True)


class _Ask:
    """One question, asked in this process or of the server that holds the data dir; the tool calls it saw."""

    def __init__(self, question: str, documents: list[str] | None, show_calls: bool) -> None:
        self.question = question
        self.documents = documents
        self.show_calls = show_calls
        self.calls: list[dict[str, Any]] = []

    def seen(self, event: dict[str, Any]) -> None:
        self.calls.append(event)
        if self.show_calls:
            console.print(_call_line(event), markup=False, highlight=False, style="dim", soft_wrap=True)

    def in_process(self, runtime: Any) -> dict[str, Any]:
        from agrag.components.data_models.evidence import EvidenceScope
        from agrag.pipelines.document_ids import check_documents_known
        from agrag.service.agent.events import answer_event, call_event
        from agrag.service.agent.evidence_agent import EvidenceAgent
        from agrag.service.tools.tool import ToolHost

        check_documents_known(runtime.store.graph, self.documents)
        scope = EvidenceScope(tuple(self.documents)) if self.documents else EvidenceScope()
        agent = EvidenceAgent(ToolHost(runtime), scope, on_call=lambda record: self.seen(call_event(record)))
        return answer_event(agent.ask(self.question))

    def served(self, server: Any) -> dict[str, Any]:
        from agrag.components.errors import AgentLLMError

        for event in server.ask(self.question, self.documents):
            if event["event"] == "tool_call":
                self.seen(event)
            elif event["event"] == "answer":
                return dict(event)
            else:
                raise AgentLLMError(str(event.get("message", event)))
        raise AgentLLMError("The server ended the answer stream without an answer; see its log.")


def _guarded(served: Callable[[Any], dict[str, Any]], server: Any) -> dict[str, Any]:
    from agrag.components.errors import AgragError

    try:
        return served(server)
    except AgragError as exc:
        fail(exc)


def _call_line(event: dict[str, Any]) -> str:
    arguments = json.dumps(event["arguments"], ensure_ascii=False)
    if len(arguments) > MAX_TRACE_ARGUMENT_CHARS:
        arguments = arguments[: MAX_TRACE_ARGUMENT_CHARS - 3] + "..."
    mark = "" if event["ok"] else " REFUSED"
    who = "" if event["caller"] == "model" else " (loop)"
    took = f"{event['seconds'] * 1000:.0f} ms"
    return f"→ {event['name']}{who} {arguments} → {event['result_chars']} chars, {took}{mark}"


def _summary(answer: dict[str, Any]) -> str:
    repaired = ", repaired once" if answer["repaired"] else ""
    return (
        f"[{answer['status']}{repaired}] {answer['model_tool_calls']} tool calls by the model, "
        f"{answer['llm_calls']} LLM calls, {answer['tokens']} tokens, {answer['seconds']:.1f} s"
    )
