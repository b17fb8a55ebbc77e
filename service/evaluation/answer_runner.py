"""Runs the built-in agent on every question of an evaluation and keeps what each answer is scored by.

The agent runs as ``agrag ask`` runs it (the same tools, limits and citation check), unscoped, on the evaluation's
default store. A question whose run failed (the LLM failed after its retries) is kept with its error and scores zero.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agrag.components.errors import AgentLLMError
from agrag.service.agent.answer import AgentAnswer, AnswerStatus, Caller
from agrag.service.agent.evidence_agent import EvidenceAgent
from agrag.service.evaluation.answer_metrics import answer_text
from agrag.service.evaluation.passages import evidence_passages
from agrag.service.tools.tool import ToolHost

if TYPE_CHECKING:
    from agrag.pipelines.runtime import Runtime

AGENT = "agent"
"""The progress label and the ``system`` of the agent's per-question lines."""

DRAFTED = frozenset({AnswerStatus.ANSWERED, AnswerStatus.NOT_GROUNDED})
"""The statuses of runs that ended with a drafted answer (checked, and rendered with its sources)."""


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    """One question's agent run, as the answer metrics read it.

    Attributes:
        status: How the run ended (``failed`` when the LLM failed after its retries).
        answer: The answer text scored: the rendered answer without references and Sources ("" without one).
        text: What ``agrag ask`` would have shown.
        cited: Corpus indexes of the passages the answer cites, in order.
        citations_valid: The answer cites at least one passage and every citation checked valid.
        tool_calls: Tool calls the model made.
        tokens: LLM tokens used.
        seconds: Wall-clock time of the run.
        error: Why the run failed, when it did.
    """

    status: str
    answer: str
    text: str
    cited: tuple[int, ...]
    citations_valid: bool
    tool_calls: int
    tokens: int
    seconds: float
    error: str = ""

    @property
    def drafted(self) -> bool:
        """True when the run ended with a drafted answer (grounded or not)."""
        return self.status in DRAFTED


def record_of(answer: AgentAnswer, index: Mapping[str, int]) -> AnswerRecord:
    """What the metrics read from one agent answer; ``index`` maps document ids to corpus indexes."""
    cited = evidence_passages((source.id for source in answer.sources), index)
    check = answer.check
    return AnswerRecord(
        status=answer.status.value,
        answer=answer_text(answer.body),
        text=answer.text,
        cited=tuple(cited),
        citations_valid=answer.status in DRAFTED and check is not None and check.grounded,
        tool_calls=sum(1 for call in answer.trace if call.caller is Caller.MODEL),
        tokens=answer.tokens,
        seconds=answer.seconds,
    )


def run_answers(
    runtime: Runtime, questions: Sequence[str], index: Mapping[str, int], tick: Callable[[str, int], None]
) -> list[AnswerRecord]:
    """Ask the agent every question in turn; a failed run is recorded with its error and the next one goes on.

    Raises:
        AgentLLMNotConfiguredError: the runtime has no LLM endpoint.
    """
    agent = EvidenceAgent(ToolHost(runtime))
    records = []
    for done, question in enumerate(questions, start=1):
        try:
            answer = agent.ask(question)
        except AgentLLMError as exc:
            records.append(AnswerRecord("failed", "", "", (), False, 0, 0, 0.0, error=str(exc)))
        else:
            records.append(record_of(answer, index))
        tick(AGENT, done)
    return records
