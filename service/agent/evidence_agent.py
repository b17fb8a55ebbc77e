"""``EvidenceAgent``: answers a question with checked citations, on Haystack's ``Agent`` and the evidence tools.

The model discovers, fetches, navigates and explores through the tools; its final reply is a draft citing
evidence ids. The loop then checks the draft's citations itself (``check_citations``), asks for one repair showing
the findings when ids are invalid or unfetched or a claim is uncited, checks again, and renders the answer with
numbered references and a Sources list (``render_citations``). A draft that still fails is returned marked not
grounded, with the findings. Limits on tool calls, tokens and time end a run with a statement naming the limit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from haystack.components.agents import Agent
from haystack.components.agents.state import State
from haystack.dataclasses import ChatMessage, ChatRole
from haystack.hooks import hook

from agrag.components.data_models.citations import CitationCheck, RenderedAnswer
from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.errors import AgentLLMError
from agrag.pipelines.agent_generator import agent_chat_generator
from agrag.service.agent.agent_tools import OnCall, ToolRunner
from agrag.service.agent.answer import AgentAnswer, AgentLimits, AnswerStatus
from agrag.service.agent.prompts import NO_ANSWER_MARK, SYSTEM_PROMPT, findings, looked_at, repair_prompt
from agrag.service.mcp.ledger import LedgerSession
from agrag.service.tools.tool import ToolContext, ToolHost

if TYPE_CHECKING:
    import openai

    from agrag.pipelines.settings import AgragSettings

MALFORMED_NUDGE = (
    "Your last reply held a tool call whose arguments were not valid JSON, so it was dropped. Call the tool again "
    "with JSON arguments that match its schema, or give your answer."
)
NOT_GROUNDED = "Not grounded: the citation check still found problems after one repair:"
TIMEOUT_GRACE_SECONDS = 0.5  # a tool call in flight when time runs out finishes before the session closes


def limits_from_settings(settings: AgragSettings) -> AgentLimits:
    """The limits of ``AGRAG_AGENT_*`` and the malformed-call retries of ``AGRAG_LLM_MAX_RETRIES``."""
    return AgentLimits(
        max_tool_calls=settings.agent_max_tool_calls,
        max_tokens=settings.agent_max_tokens,
        timeout_seconds=settings.agent_timeout_seconds,
        max_result_chars=settings.agent_max_result_chars,
        max_llm_retries=settings.llm_max_retries,
    )


class EvidenceAgent:
    """The built-in agent over one open data dir.

    Usage:
        ```python
        agent = EvidenceAgent(ToolHost(runtime), EvidenceScope(("d1f3a9c2b4e5d6f",)))
        answer = agent.ask("Who owns the Orion Planner?")
        print(answer.text)
        ```
    """

    def __init__(
        self,
        host: ToolHost,
        scope: EvidenceScope | None = None,
        limits: AgentLimits | None = None,
        on_call: OnCall | None = None,
    ) -> None:
        """Answer over ``host``'s runtime within ``scope`` (every document by default); ``on_call`` sees each call.

        Raises:
            AgentLLMNotConfiguredError: the runtime has no LLM endpoint.
        """
        self.host = host
        self.scope = scope or EvidenceScope()
        self.limits = limits or limits_from_settings(host.runtime.settings.agrag)
        self._on_call = on_call
        agent_chat_generator(host.runtime)  # fails now, before any work, when no LLM is configured

    def ask(self, question: str) -> AgentAnswer:
        """Answer ``question``; the run ends at the first limit reached, and the answer says which.

        Raises:
            AgentLLMError: the LLM failed (HTTP errors, timeouts, malformed tool calls) after its retries.
        """
        started = time.monotonic()
        runtime = self.host.runtime
        session = LedgerSession(
            runtime.store,
            runtime.embedder,
            self.scope,
            runtime.settings.agrag.mcp_ledger_capacity,
            runtime.graph_passages,
        )
        runner = ToolRunner(
            ToolContext(self.host, self.scope, session),
            self.limits,
            started + self.limits.timeout_seconds,
            self._on_call,
        )
        run = _Run(question, runner, self.limits, started)
        worker = threading.Thread(target=run.execute, args=(self._agent(run),), name="agrag-ask", daemon=True)
        worker.start()
        worker.join(self.limits.timeout_seconds)
        if worker.is_alive():  # the LLM is still thinking: stop here, and let the worker end at its next step
            runner.cancelled.set()
            worker.join(TIMEOUT_GRACE_SECONDS)
            return run.stopped(AnswerStatus.TIMEOUT)
        if run.error is not None:
            raise run.error
        assert run.answer is not None
        return run.answer

    def _agent(self, run: _Run) -> Agent:
        generator = agent_chat_generator(self.host.runtime, self.limits.timeout_seconds)
        return Agent(
            chat_generator=generator,
            tools=run.runner.haystack_tools(),
            max_agent_steps=self.limits.max_tool_calls + self.limits.max_llm_retries + 2,
            tool_concurrency_limit=1,  # calls run in the order the model wrote them, one at a time
            hooks={"before_llm": [hook(run.before_llm)]},
        )


@dataclass
class _Run:
    """One question's run: its budget, its outcome, and the steps of the loop."""

    question: str
    runner: ToolRunner
    limits: AgentLimits
    started: float
    tokens_before: int = 0
    tokens: int = 0
    llm_calls: int = 0
    malformed: int = 0
    answer: AgentAnswer | None = None
    error: BaseException | None = None
    _stop: AnswerStatus | None = field(default=None, repr=False)

    def execute(self, agent: Agent) -> None:
        import openai  # noqa: PLC0415 - 0.4 s to import; the agent's chat generator has loaded it by now

        try:
            self.answer = self._loop(agent)
        except AgentLLMError as exc:
            self.error = exc
        except openai.OpenAIError as exc:
            self.error = _llm_error(exc, agent)
        except BaseException as exc:  # re-raised in the caller's thread, with its traceback
            self.error = exc

    def _loop(self, agent: Agent) -> AgentAnswer:
        messages = [ChatMessage.from_system(SYSTEM_PROMPT), ChatMessage.from_user(self.question)]
        messages, draft = self._draft(agent, messages)
        if draft is None:
            return self.stopped(self._stop or AnswerStatus.TOOL_CALL_LIMIT)
        if draft.lstrip().startswith(NO_ANSWER_MARK):
            return self._no_answer(draft)
        check: CitationCheck = self.runner.run_tool("check_citations", {"answer": draft})
        repaired = False
        if _needs_repair(check):
            repaired = True
            messages, draft = self._draft(agent, [*messages, ChatMessage.from_user(repair_prompt(check))])
            if draft is None:
                return self.stopped(self._stop or AnswerStatus.TOOL_CALL_LIMIT)
            if draft.lstrip().startswith(NO_ANSWER_MARK):
                return self._no_answer(draft)
            check = self.runner.run_tool("check_citations", {"answer": draft})
        rendered: RenderedAnswer = self.runner.run_tool("render_citations", {"answer": check.answer})
        if _needs_repair(check) or not check.cited:
            lines = "\n".join(f"- {finding}" for finding in findings(check)) or "- it cites no passage it read"
            text = (
                f"Not grounded: the citation check still found problems after one repair:\n{lines}\n\n{rendered.text}"
            )
            return self._answer(AnswerStatus.NOT_GROUNDED, text, rendered, check, repaired)
        return self._answer(AnswerStatus.ANSWERED, rendered.text, rendered, check, repaired)

    def _draft(self, agent: Agent, messages: Sequence[ChatMessage]) -> tuple[list[ChatMessage], str | None]:
        """Run the agent to its final reply: the conversation, and the draft (None when a limit stopped it)."""
        self.malformed = 0
        result = agent.run(list(messages))
        self.tokens_before += _used(result.get("token_usage"))
        self.tokens = self.tokens_before
        if self._stop is not None or result.get("exit_reason") == "max_agent_steps":
            return result["messages"], None
        last: ChatMessage = result["last_message"]
        return result["messages"], (last.text or "").strip() or None

    def before_llm(self, state: State) -> None:
        """Before each LLM call: stop at a limit, re-ask after a malformed tool call, count the call."""
        self.tokens = self.tokens_before + _used(state.data.get("token_usage"))
        stop = self._limit_reached()
        if stop is None and _dropped_tool_call(state.data["messages"]):
            self.malformed += 1
            if self.malformed > self.limits.max_llm_retries:
                raise AgentLLMError(
                    f"The LLM sent {self.malformed} replies in a row whose tool calls were not valid JSON, "
                    f"after {self.limits.max_llm_retries} retries. Use a model with tool calling (AGRAG_LLM_MODEL)."
                )
            state.set("messages", [ChatMessage.from_user(MALFORMED_NUDGE)])
        if stop is not None:
            self._stop = stop
            state.set("stop_run", stop.value)
            return
        self.llm_calls += 1

    def _limit_reached(self) -> AnswerStatus | None:
        if self.runner.cancelled.is_set() or time.monotonic() > self.started + self.limits.timeout_seconds:
            return AnswerStatus.TIMEOUT
        if self.runner.limit_hit:
            return AnswerStatus.TOOL_CALL_LIMIT
        if self.tokens >= self.limits.max_tokens:
            return AnswerStatus.TOKEN_LIMIT
        return None

    def stopped(self, status: AnswerStatus) -> AgentAnswer:
        """The answer of a run a limit ended: which limit, and what the run looked at."""
        statement = {
            AnswerStatus.TOOL_CALL_LIMIT: f"the agent reached its limit of {self.limits.max_tool_calls} tool calls "
            "(AGRAG_AGENT_MAX_TOOL_CALLS)",
            AnswerStatus.TOKEN_LIMIT: f"the run used {self.tokens} LLM tokens, reaching its limit of "
            f"{self.limits.max_tokens} (AGRAG_AGENT_MAX_TOKENS)",
            AnswerStatus.TIMEOUT: f"the run reached its time limit of {self.limits.timeout_seconds:g} s "
            "(AGRAG_AGENT_TIMEOUT_SECONDS)",
        }[status]
        text = f"No answer: {statement} before it finished an answer. {looked_at(self.runner.trace)}"
        return self._answer(status, text)

    def _no_answer(self, draft: str) -> AgentAnswer:
        said = draft.lstrip()[len(NO_ANSWER_MARK) :].strip()
        text = f"The documents do not answer this question. {said}\n{looked_at(self.runner.trace)}".replace("  ", " ")
        return self._answer(AnswerStatus.NO_ANSWER, text.strip())

    def _answer(
        self,
        status: AnswerStatus,
        text: str,
        rendered: RenderedAnswer | None = None,
        check: CitationCheck | None = None,
        repaired: bool = False,
    ) -> AgentAnswer:
        return AgentAnswer(
            question=self.question,
            status=status,
            text=text,
            sources=rendered.sources if rendered is not None else (),
            body=rendered.text if rendered is not None else "",
            check=check,
            repaired=repaired,
            trace=tuple(self.runner.trace),
            tokens=self.tokens,
            llm_calls=self.llm_calls,
            seconds=time.monotonic() - self.started,
        )


def _needs_repair(check: CitationCheck) -> bool:
    return bool(check.invalid or check.uncited)


def _dropped_tool_call(messages: Sequence[ChatMessage]) -> bool:
    """True when the last reply is empty: the generator dropped its tool call, whose arguments were not JSON."""
    last = messages[-1] if messages else None
    return last is not None and last.is_from(ChatRole.ASSISTANT) and not last.text and not last.tool_calls


def _used(usage: Any) -> int:
    if not isinstance(usage, dict):
        return 0
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    return sum(v for k, v in usage.items() if k in {"prompt_tokens", "completion_tokens"} and isinstance(v, int))


def _llm_error(exc: openai.OpenAIError, agent: Agent) -> AgentLLMError:
    import openai  # noqa: PLC0415

    generator = agent.chat_generator
    where = getattr(generator, "api_base_url", None) or "the LLM endpoint"
    retries = getattr(generator, "max_retries", None)
    kind = {
        openai.APITimeoutError: "timed out",
        openai.APIConnectionError: "could not be reached",
    }.get(type(exc), "failed")
    detail = getattr(exc, "message", None) or str(exc)
    return AgentLLMError(
        f"The LLM at {where} {kind} after {retries} retries (AGRAG_LLM_MAX_RETRIES, AGRAG_LLM_TIMEOUT_SECONDS): "
        f"{detail[:300]}"
    )
