"""``POST /v1/ask``: the built-in agent over HTTP, streamed as NDJSON: each tool call as it happens, then the answer.

The caller's document scope applies to every tool call of the run. A missing LLM is refused before the stream
starts (HTTP 502, naming ``AGRAG_LLM_BASE_URL``); an LLM that fails during the run ends the stream with an
``error`` event, since the status line has already been sent.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import Field

from agrag.components.errors import AgragError
from agrag.pipelines.document_ids import check_documents_known
from agrag.service.agent.events import answer_event, call_event, error_event
from agrag.service.agent.evidence_agent import EvidenceAgent
from agrag.service.api.dependencies import CurrentCaller, State
from agrag.service.api.errors import ERROR_RESPONSES
from agrag.service.api.sessions import _scope as narrowed_scope
from agrag.service.tools.evidence_tools import MAX_QUERY_CHARS
from agrag.service.tools.text_fields import DocumentIdText
from agrag.service.tools.tool import ToolInput

logger = logging.getLogger(__name__)

NDJSON = "application/x-ndjson"


class AskRequest(ToolInput):
    """The body of ``POST /v1/ask``."""

    question: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS, description="The question, in your words.")
    documents: tuple[DocumentIdText, ...] | None = Field(
        None,
        description="Only these document ids may be read (with a token limited to documents: only those of them "
        "it may read). Default: every document the token may read.",
    )


def ask_routes() -> APIRouter:
    """The ``ask`` route."""
    router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)

    @router.post(
        "/ask",
        summary="Ask a question (streamed)",
        description="Answer a question with the built-in agent over your documents, streamed as NDJSON: one "
        '`{"event": "tool_call", ...}` line per tool call (name, arguments, result size, time) as it happens, then '
        '`{"event": "answer", ...}` with the text (numbered references and a Sources list), its status, sources '
        'and tokens, or `{"event": "error", "message": ...}`. Needs AGRAG_LLM_BASE_URL on the server.',
        tags=["agent"],
        operation_id="ask",
        response_class=StreamingResponse,
        responses={200: {"content": {NDJSON: {}}, "description": "The events of the run, one JSON object a line."}},
    )
    def ask(request: AskRequest, state: State, caller: CurrentCaller) -> StreamingResponse:
        events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        scope = narrowed_scope(caller.documents, request.documents)
        if request.documents and scope.document_ids:
            check_documents_known(state.host.runtime.store.graph, scope.document_ids)
        agent = EvidenceAgent(state.host, scope, on_call=lambda record: events.put(call_event(record)))
        threading.Thread(target=_run, args=(agent, request.question, events, state.mask), name="agrag-ask-http").start()
        return StreamingResponse(_lines(events), media_type=NDJSON)

    return router


def _run(
    agent: EvidenceAgent, question: str, events: queue.Queue[dict[str, Any] | None], mask: Callable[[str], str]
) -> None:
    try:
        events.put(answer_event(agent.ask(question)))
    except AgragError as exc:
        events.put(error_event(type(exc).__name__, mask(str(exc))))
    except Exception:  # the stream must end with an event; the traceback goes to the log
        logger.exception("agent run failed")
        events.put(error_event("InternalError", "The agent failed; see the server log."))
    finally:
        events.put(None)


def _lines(events: queue.Queue[dict[str, Any] | None]) -> Iterator[str]:
    while (event := events.get()) is not None:
        yield json.dumps(event, ensure_ascii=False) + "\n"
