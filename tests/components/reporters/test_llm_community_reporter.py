import dataclasses
import json
from typing import Any

import pytest

from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.community import CommunityReport, Finding
from agrag.components.errors import LLMError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.reporters.extractive_community_reporter import ExtractiveCommunityReporter
from agrag.components.reporters.llm_community_reporter import LLMCommunityReporter, build_prompt, parse_report
from agrag.components.reporters.source_sentences import gather_evidence
from tests.components.reporters.corpus import TEAM, build_corpus
from tests.support.scripted_llm import scripted_llm


def first_entity(prompt: str) -> str:
    """The name of the first (most central) entity listed in a prompt."""
    lines = prompt.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Entities"))
    return lines[start + 1].removeprefix("- ").split(" (")[0]


def report_about_first_entity(messages: list[dict[str, str]]) -> str:
    name = first_entity(messages[-1]["content"])
    if name == "Tomas Eriksen":
        return "Sorry, I cannot help with that."
    findings = [{"summary": f"{name} is central", "explanation": "It is named most often."}, "Plain finding"]
    return json.dumps(
        {"title": f"About {name}", "summary": f"A community around {name}.", "rating": 7, "findings": findings}
    )


def client(base_url: str) -> OpenAIChatClient:
    return OpenAIChatClient(base_url, model="scripted", timeout_seconds=10, max_retries=0)


def test_llm_reports_and_an_extractive_fallback_for_a_garbage_answer() -> None:
    corpus = build_corpus()
    team, pair = corpus.community(*TEAM), corpus.community("Tomas Eriksen", "Kestrel Boards", level=1)
    with scripted_llm(report_about_first_entity) as server:
        result = LLMCommunityReporter(client(server.base_url)).run(communities=[team, pair], **corpus.inputs())
    assert result["fallbacks"] == 1
    reported = result["communities"]
    assert [c.id for c in reported] == [team.id, pair.id]
    assert reported[0].report == CommunityReport(
        title="About Orion Planner",
        summary="A community around Orion Planner.",
        rating=7.0,
        findings=(Finding("Orion Planner is central", "It is named most often."), Finding("Plain finding")),
        method="llm",
    )
    expected_fallback = ExtractiveCommunityReporter().run(communities=[team, pair], **corpus.inputs())["communities"]
    assert reported[1] == expected_fallback[1]
    assert reported[1].report is not None
    assert reported[1].report.method == "extractive"
    [team_prompt] = [p for p in server.prompts if first_entity(p) == "Orion Planner"]
    for name in TEAM:
        assert name in team_prompt
    assert "- Maria Chen -WROTE-> Orion Planner: Maria Chen WROTE" in team_prompt
    assert "Atlas Controller -" not in team_prompt  # not a member: its relation is left out
    assert "Tomas Eriksen helped define the obstacle map format, so that Vega Perception and the Orion" in team_prompt


def test_output_keeps_the_input_order_under_concurrency() -> None:
    corpus = build_corpus()
    names = ["Maria Chen", "Orion Planner", "Vega Perception", "Kestrel Boards"]
    communities = [corpus.community(name, "Atlas Controller", level=i) for i, name in enumerate(names)] * 3
    ticks: list[int] = []
    with scripted_llm(report_about_first_entity) as server:
        result = LLMCommunityReporter(client(server.base_url), concurrency=4, progress=ticks.append).run(
            communities=communities, **corpus.inputs()
        )
    assert result["fallbacks"] == 0
    assert sum(ticks) == len(communities), "one progress tick per community"
    assert [c.id for c in result["communities"]] == [c.id for c in communities]
    assert len(server.requests) == len(communities)
    evidence = gather_evidence(communities, **corpus.inputs())
    for item, reported in zip(evidence, result["communities"], strict=True):
        assert reported.report is not None
        assert reported.report.method == "llm"
        assert reported.report.title == f"About {item.members[0].name}"


def test_an_unreachable_llm_falls_back_for_every_community() -> None:
    corpus = build_corpus()
    communities = [corpus.community(*TEAM), corpus.community("Maria Chen", "Orion Planner", level=1)]
    with scripted_llm(report_about_first_entity, fail_first=100) as server:
        result = LLMCommunityReporter(client(server.base_url)).run(communities=communities, **corpus.inputs())
    assert result["fallbacks"] == 2
    assert all(c.report is not None and c.report.method == "extractive" for c in result["communities"])


def test_prompt_fits_max_input_chars() -> None:
    corpus = build_corpus()
    [evidence] = gather_evidence([corpus.community(*TEAM)], **corpus.inputs())
    full = build_prompt(evidence, 8000)
    short = build_prompt(evidence, 300)
    empty = dataclasses.replace(evidence, members=(), relations=(), sentences=(), sentence_members=())
    base = build_prompt(empty, 300)
    assert len(short) - len(base) <= 300
    assert len(short) < len(full)
    assert "- Orion Planner (Component)" in short  # the most central member comes first
    assert "Kestrel Boards" in full


@pytest.mark.parametrize(
    ("answer", "rating"),
    [({"title": "T", "summary": "S", "rating": 12}, 10.0), ({"title": "T", "summary": "S", "rating": "6.5"}, 6.5)],
)
def test_parse_report_clamps_and_reads_ratings(answer: dict[str, object], rating: float) -> None:
    assert parse_report(answer) == CommunityReport("T", "S", rating, (), "llm")


@pytest.mark.parametrize(
    "answer",
    [
        {"summary": "S", "rating": 5},
        {"title": "T", "summary": "", "rating": 5},
        {"title": "T", "summary": "S", "rating": "high"},
        {"title": "T", "summary": "S", "rating": True},
        {"title": "T", "summary": "S", "rating": 5, "findings": "none"},
        {"title": "T", "summary": "S", "rating": 5, "findings": [{"explanation": "no summary"}]},
    ],
)
def test_parse_report_refuses_malformed_answers(answer: dict[str, object]) -> None:
    with pytest.raises(LLMError):
        parse_report(answer)


@pytest.mark.parametrize("settings", [{"max_input_chars": 10}, {"concurrency": 0}])
def test_settings_out_of_range_are_refused(settings: dict[str, Any]) -> None:
    with pytest.raises(ComponentConfigError):
        LLMCommunityReporter(client("http://127.0.0.1:9/v1"), **settings)
