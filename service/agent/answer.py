"""What an agent run returns: the answer, how it ended, the citation check, and the trace of every tool call."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agrag.components.data_models.citations import CitationCheck, Source


class AnswerStatus(StrEnum):
    """How an agent run ended."""

    ANSWERED = "answered"  # every citation checked valid (after at most one repair)
    NOT_GROUNDED = "not_grounded"  # the check still found problems after the repair; the findings are shown
    NO_ANSWER = "no_answer"  # the evidence read does not answer the question, and the answer says so
    TOOL_CALL_LIMIT = "tool_call_limit"
    TOKEN_LIMIT = "token_limit"
    TIMEOUT = "timeout"


class Caller(StrEnum):
    """Who asked for a tool call: the model, or the loop itself (the final check and render)."""

    MODEL = "model"
    LOOP = "loop"


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call of a run, as traced.

    Attributes:
        name: The tool's name (the MCP server's names: ``search_evidence``, ``fetch_evidence``...).
        arguments: The arguments as the model sent them.
        result: The result as the model read it (JSON text, bounded), or the error it got.
        seconds: How long the call took.
        ok: False when the call was refused (bad arguments, unknown id) or failed.
        caller: The model, or the loop's own check and render.
    """

    name: str
    arguments: dict[str, Any]
    result: str
    seconds: float
    ok: bool = True
    caller: Caller = Caller.MODEL

    @property
    def result_chars(self) -> int:
        """The size of the result the model read, in characters."""
        return len(self.result)


@dataclass(frozen=True)
class AgentLimits:
    """The limits of one run; reaching one ends the run with a statement saying which.

    Attributes:
        max_tool_calls: The most tool calls the model may make.
        max_tokens: The most LLM tokens (prompt and completion, every call summed).
        timeout_seconds: The most wall-clock time for the whole run.
        max_result_chars: Tool results longer than this are shortened before the model reads them.
        max_llm_retries: Re-asks after a malformed tool call before the run is reported failed.
    """

    max_tool_calls: int = 20
    max_tokens: int = 60_000
    timeout_seconds: float = 300.0
    max_result_chars: int = 12_000
    max_llm_retries: int = 3


@dataclass(frozen=True)
class AgentAnswer:
    """The outcome of ``EvidenceAgent.ask``.

    Attributes:
        question: The question as asked.
        status: How the run ended.
        text: What to show: the answer with numbered references and a Sources list, or a statement of why there
            is none (a limit, no evidence, citations that did not check).
        sources: The numbered sources of ``text``.
        body: The rendered answer alone, with its references and Sources list but without any statement about
            the run (empty when the run drafted no answer): what the answer-quality metrics score.
        check: The last citation check of the draft, if one ran.
        repaired: True when the first draft failed the check and the model was asked to repair it.
        trace: Every tool call, in order.
        tokens: LLM tokens used (prompt and completion).
        llm_calls: Chat completions requested.
        seconds: Wall-clock time of the run.
    """

    question: str
    status: AnswerStatus
    text: str
    sources: tuple[Source, ...] = ()
    body: str = ""
    check: CitationCheck | None = None
    repaired: bool = False
    trace: tuple[ToolCallRecord, ...] = field(default_factory=tuple)
    tokens: int = 0
    llm_calls: int = 0
    seconds: float = 0.0

    @property
    def grounded(self) -> bool:
        """True when every citation of the answer checked valid."""
        return self.status is AnswerStatus.ANSWERED
