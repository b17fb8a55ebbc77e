"""``agrag eval ... evaluation.answers=true``: the built-in agent answers five questions (a scripted LLM behind the
OpenAI protocol) and the report scores them: exact match, F1, contains, citations valid, cited recall, tool calls and
tokens per question."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agrag.service.cli import app
from tests.service.evaluation.test_eval_command import PASSAGES
from tests.support.scripted_tool_llm import Call, Reply, scripted_tool_llm, tool_results

TITLES = [title for title, _ in PASSAGES]


@dataclass(frozen=True)
class Plan:
    """What the script does for one question: the passage it fetches, and the drafts it sends."""

    question: str
    gold: list[int]
    answer: str
    fetch: str  # the title of the passage fetched
    drafts: tuple[str, ...]  # each with {title} markers for the id of the passage of that title


PLANS = [
    # right, cites the answer passage: EM 1, F1 1, one of three gold passages cited
    Plan(
        "Which company runs the depot that uses the planner Maria Chen wrote?",
        [0, 1, 2],
        "Acme Robotics",
        "Lyon Depot",
        ("Acme Robotics [{Lyon Depot}].",),
    ),
    # a sentence holding the answer: EM 0, F1 4/7, contains 1; one of two gold passages cited
    Plan(
        "Where did the author of the Atlas Controller study?",
        [4, 5],
        "ETH Zurich",
        "Tomas Berg",
        ("He studied at ETH Zurich [{Tomas Berg}].",),
    ),
    # the first draft cites a passage it never fetched; the repair cites the fetched one
    Plan(
        "In which city is Acme Robotics based?",
        [3],
        "Grenoble",
        "Acme Robotics",
        ("Grenoble [{Grenoble}].", "Grenoble [{Acme Robotics}]."),
    ),
    # both drafts cite an unfetched passage: not grounded, its citation removed, EM still scored on the text
    Plan("Who wrote the Atlas Controller?", [4], "Tomas Berg", "Tomas Berg", ("Tomas Berg [{Atlas Controller}].",) * 2),
    # the documents do not say: no answer
    Plan("What colour is the Vega Camera?", [7], "black", "Vega Camera", ("[no-answer] Its passage gives no colour.",)),
]


def answering(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
    """Search, fetch the plan's passage, then send the plan's drafts in turn (a repair request gets the next one)."""
    question = next(m["content"] for m in messages if m["role"] == "user")
    plan = next(p for p in PLANS if p.question == question)
    results = tool_results(messages)
    if not results:
        return Reply(calls=(Call("search_evidence", {"query": question, "limit": 8}),))
    ids = {hit["location"]["title"]: hit["id"] for hit in results[0]["hits"]}
    if len(results) == 1:
        return Reply(calls=(Call("fetch_evidence", {"ids": [ids[plan.fetch]]}),))
    repairs = sum(1 for m in messages if m["role"] == "user" and "citation check found problems" in m["content"])
    draft = plan.drafts[min(repairs, len(plan.drafts) - 1)]
    for title, evidence_id in ids.items():
        draft = draft.replace("{" + title + "}", evidence_id)
    return Reply(text=draft)


@pytest.fixture
def dataset(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"title": t, "text": x} for t, x in PASSAGES]))
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps([{"question": p.question, "gold": p.gold, "answer": p.answer} for p in PLANS]))
    return corpus, questions


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_eval_scores_the_agents_answers(tmp_path: Path, dataset: tuple[Path, Path]) -> None:
    corpus, questions = dataset
    args = ["eval", "--corpus", str(corpus), "--questions", str(questions)]
    options = ["evaluation.answers=true", "evaluation.recipes=[chunk]", "evaluation.search_modes=[hybrid]"]
    with scripted_tool_llm(answering) as llm:
        env = {"COLUMNS": "240", "AGRAG_LLM_BASE_URL": llm.base_url, "AGRAG_LLM_MODEL": "scripted"}
        result = CliRunner().invoke(app, [*args, *options, "evaluation.bootstrap_samples=100"], env=env)
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert "Answering every question with the agent (scripted at http://127.0.0.1:" in result.output
    assert "5 of 5 questions have a gold answer" in result.output

    summary = json.loads(next((tmp_path / "bench" / "results").glob("corpus-*.json")).read_text())
    assert summary["answers"] == {
        "questions": 5,
        "with_gold_answer": 5,
        "drafted": 4,
        "statuses": {"answered": 3, "not_grounded": 1, "no_answer": 1},
        "exact_match": 60.0,  # Acme Robotics, Grenoble, Tomas Berg
        "f1": round(100 * (1 + 4 / 7 + 1 + 1 + 0) / 5, 2),
        "contains": 80.0,
        "citations_valid": 75.0,  # of the four drafted answers, the not grounded one fails
        "cited_recall": round(100 * (1 / 3 + 1 / 2 + 1) / 5, 2),
        "tool_calls": 2.0,  # a search and a fetch each
        "tokens": 51.0,  # 17 LLM calls (three a question, one more for each repair) of 15 tokens
        "seconds": summary["answers"]["seconds"],
        "failed": 0,
        "failure": "",
    }
    # every request was the agent's: the evaluation's stores are built with offline reports even with an LLM set
    assert len(llm.requests) == 17 and all(request.get("tools") for request in llm.requests)
    table = result.output.split("Agent answers", 1)[1]
    assert table.startswith(
        " (5 questions, 5 with a gold answer; answered 3, no_answer 1, not_grounded 1):\n\n"
        "| EM | F1 | contains | citations valid | cited recall | tool calls / q | tokens / q | s / q |\n"
        "|---|---|---|---|---|---|---|---|\n| 60.0 | 71.4 | 80.0 | 75.0 (n=4) | 36.7 | 2.0 | 51 | "
    )

    jsonl = next((tmp_path / "bench" / "results").glob("*.jsonl"))
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    agent = [line for line in lines if line["system"] == "agent"]
    assert [line["status"] for line in agent] == ["answered", "answered", "answered", "not_grounded", "no_answer"]
    assert [line["answer"] for line in agent] == [
        "Acme Robotics.",
        "He studied at ETH Zurich.",
        "Grenoble.",
        "Tomas Berg.",
        "",
    ]
    assert [line["cited"] for line in agent] == [[2], [5], [3], [], []]
    assert agent[3]["text"].startswith("Not grounded: the citation check still found problems after one repair:")
    assert agent[4]["text"].startswith("The documents do not answer this question. Its passage gives no colour.")


def test_answers_without_an_llm_are_refused_before_any_work(tmp_path: Path, dataset: tuple[Path, Path]) -> None:
    corpus, questions = dataset
    args = ["eval", "--corpus", str(corpus), "--questions", str(questions), "evaluation.answers=true"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert "evaluation.answers=true runs the built-in agent" in result.output
    assert "AGRAG_LLM_BASE_URL=http://localhost:11434/v1" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "bench").exists()
