"""An agent run as events (JSON data): each tool call as it happens, then the answer.

``POST /v1/ask`` streams them as NDJSON lines, and ``agrag ask`` prints them, whether it runs the agent itself or
asks the server that holds the data dir.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from agrag.service.agent.answer import AgentAnswer, ToolCallRecord


def call_event(record: ToolCallRecord) -> dict[str, Any]:
    """A tool call: its name, who asked for it (model or loop), arguments, result size, time, and whether it ran."""
    return {
        "event": "tool_call",
        "name": record.name,
        "caller": record.caller.value,
        "arguments": record.arguments,
        "result_chars": record.result_chars,
        "seconds": round(record.seconds, 4),
        "ok": record.ok,
    }


def answer_event(answer: AgentAnswer) -> dict[str, Any]:
    """The end of a run: the text to show, how the run ended, its sources, and what it cost."""
    return {
        "event": "answer",
        "status": answer.status.value,
        "text": answer.text,
        "sources": [asdict(source) for source in answer.sources],
        "repaired": answer.repaired,
        "model_tool_calls": sum(1 for record in answer.trace if record.caller.value == "model"),
        "tokens": answer.tokens,
        "llm_calls": answer.llm_calls,
        "seconds": round(answer.seconds, 3),
    }


def error_event(error: str, message: str) -> dict[str, Any]:
    """A run that failed (the LLM failed after its retries): the error's class and its message."""
    return {"event": "error", "error": error, "message": message}
