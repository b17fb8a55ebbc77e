import dataclasses
import math

import pytest

from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.community import Finding
from agrag.components.reporters.extractive_community_reporter import (
    ExtractiveCommunityReporter,
    importance_ratings,
    join_sentences,
)
from agrag.components.reporters.source_sentences import gather_evidence, split_sentences
from tests.components.reporters.corpus import TEAM, build_corpus


def test_split_sentences_keeps_exact_text_without_markup() -> None:
    text = (
        "# Title\n\nFirst sentence of a paragraph that\nwraps a line. Second one here!\n\n"
        "- A list item that names\n  two lines.\n- Another list item here.\n\n"
        "| Name | Owner |\n|---|:---:|\n| Orion Planner | Maria Chen |\n\n---\nTwo words.\n"
    )
    sentences = split_sentences(text)
    assert sentences == [
        "First sentence of a paragraph that\nwraps a line.",
        "Second one here!",
        "A list item that names\n  two lines.",
        "Another list item here.",
        "Orion Planner | Maria Chen",  # the header row and "Two words." are fragments of fewer than three words
    ]
    assert all(s in text for s in sentences)


def test_split_sentences_of_a_table_chunk_takes_each_line_as_a_row() -> None:
    text = "Site,City,Site lead\nLyon DC,Lyon,Camille Durand\nRotterdam Hub,Rotterdam,Pieter de Vries"
    assert split_sentences(text, rows=True) == text.split("\n")


def test_report_names_central_entities_and_quotes_the_sources() -> None:
    corpus = build_corpus()
    community = corpus.community(*TEAM)
    [reported] = ExtractiveCommunityReporter(sentences=3, findings=5).run(communities=[community], **corpus.inputs())[
        "communities"
    ]
    assert dataclasses.replace(reported, report=None) == community
    report = reported.report
    assert report is not None
    assert report.method == "extractive"
    # Centrality (supporting chunks of internal relations): Orion 5, Vega 4, Maria 3, Tomas 3, Kestrel 1.
    assert report.title == "Orion Planner, Vega Perception and Maria Chen"
    [evidence] = gather_evidence([community], **corpus.inputs())
    top = evidence.sentences[:3]
    assert top == (
        "Tomas Eriksen helped define the obstacle map format, so that Vega Perception\nand the Orion Planner share "
        "one map schema.",
        "The Orion Planner consumes obstacle maps from Vega Perception and sends\nvelocity targets to the Atlas "
        "Controller.",
        "Maria Chen wrote the Orion Planner in 2023 as a replacement for the old\ngrid-based planner.",
    )
    assert report.summary == " ".join(top)
    texts = [c.text for c in corpus.chunks]
    assert all(any(s in text for text in texts) for s in evidence.sentences)
    assert 0 <= report.rating <= 10


def test_findings_present_the_most_central_members_with_their_best_sentence() -> None:
    corpus = build_corpus()
    [reported] = ExtractiveCommunityReporter(findings=5).run(communities=[corpus.community(*TEAM)], **corpus.inputs())[
        "communities"
    ]
    assert reported.report is not None
    findings = reported.report.findings
    assert [f.summary for f in findings] == [
        "Orion Planner (Component)",
        "Vega Perception (Component)",
        "Maria Chen (Person)",
        "Tomas Eriksen (Person)",
        "Kestrel Boards (Vendor)",
    ]
    assert findings[0].explanation.startswith("Tomas Eriksen helped define")
    assert findings[1].explanation.startswith("The Orion Planner consumes")  # the best one is taken already
    assert findings[3].explanation == "Vega Perception | Tomas Eriksen"
    assert findings[4] == Finding("Kestrel Boards (Vendor)", "A supplier of motor boards.")  # named in no chunk


def test_names_match_case_insensitively_and_only_members_count() -> None:
    corpus = build_corpus()
    [evidence] = gather_evidence([corpus.community(*TEAM)], **corpus.inputs())
    orion = corpus.by_name["Orion Planner"].id
    named = dict(zip(evidence.sentences, evidence.sentence_members, strict=True))
    assert named["She wrote the\norion planner in 2023 and still owns it."] == {orion}
    assert corpus.by_name["Atlas Controller"].id not in set().union(*evidence.sentence_members)
    assert "He built the lidar and camera fusion pipeline." not in evidence.sentences  # names no member


def test_a_sentence_repeated_in_several_chunks_is_kept_once() -> None:
    corpus = build_corpus()
    copy = dataclasses.replace(corpus.chunks[1], id="orion.v1.section", order=9)
    corpus.chunks.append(copy)
    corpus.mentions += [(copy.id, eid) for chunk_id, eid in corpus.mentions if chunk_id == corpus.chunks[1].id]
    [evidence] = gather_evidence([corpus.community(*TEAM)], **corpus.inputs())
    assert len(evidence.sentences) == len(set(evidence.sentences))


def test_ratings_grow_with_size_and_weight_up_to_ten() -> None:
    corpus = build_corpus()
    team, pair = corpus.community(*TEAM), corpus.community("Tomas Eriksen", "Kestrel Boards", level=1)
    reported = ExtractiveCommunityReporter().run(communities=[team, pair], **corpus.inputs())["communities"]
    ratings = [c.report.rating for c in reported if c.report]
    # size + internal weight: team 5 + 8 = 13, pair 2 + 1 = 3
    assert ratings == [10.0, round(10 * math.log(4) / math.log(14), 1)]
    evidence = gather_evidence([team, pair], **corpus.inputs())
    assert importance_ratings(evidence) == ratings
    assert reported[1].report is not None
    assert reported[1].report.title == "Tomas Eriksen and Kestrel Boards"


def test_no_communities_and_unknown_members() -> None:
    corpus = build_corpus()
    assert ExtractiveCommunityReporter().run(communities=[], **corpus.inputs())["communities"] == []
    stranger = dataclasses.replace(corpus.community("Maria Chen"), entity_ids=("e-unknown-1", "e-unknown-2"))
    [reported] = ExtractiveCommunityReporter().run(communities=[stranger], **corpus.inputs())["communities"]
    assert reported.report is not None
    assert reported.report.title == f"Community {stranger.id}"
    assert reported.report.summary == ""


def test_join_sentences_ends_table_rows_with_a_full_stop() -> None:
    assert join_sentences(["Orion Planner | Maria Chen", "It plans routes."]) == (
        "Orion Planner | Maria Chen. It plans routes."
    )


@pytest.mark.parametrize("settings", [{"sentences": 0}, {"findings": -1}])
def test_settings_out_of_range_are_refused(settings: dict[str, int]) -> None:
    with pytest.raises(ComponentConfigError):
        ExtractiveCommunityReporter(**settings)
