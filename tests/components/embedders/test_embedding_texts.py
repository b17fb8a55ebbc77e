"""The text each stored item is embedded from, pinned: a change here changes every stored vector."""

from __future__ import annotations

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community, CommunityReport, Finding
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.fact import Fact
from agrag.components.embedders.embedding_texts import (
    chunk_embedding_text,
    community_report_text,
    entity_comparison_text,
    entity_embedding_text,
    fact_keyword_text,
    predicate_words,
)


def _chunk(text: str, heading_path: tuple[str, ...], title: str = "Team") -> Chunk:
    return Chunk("d1.v1.0", "d1", "v1", text, heading_path, 0, 0, len(text), title=title)


def test_a_chunk_is_embedded_under_its_title_and_heading_path() -> None:
    assert chunk_embedding_text(_chunk("Ada leads Orion.", ("Leads",))) == "Team > Leads\nAda leads Orion."


def test_a_heading_path_that_starts_with_the_title_does_not_repeat_it() -> None:
    assert chunk_embedding_text(_chunk("Ada leads Orion.", ("Team", "Leads"))) == "Team > Leads\nAda leads Orion."


def test_a_heading_the_first_line_states_is_not_repeated() -> None:
    text = "## Leads\nAda leads Orion."
    assert chunk_embedding_text(_chunk(text, ("Team", "Leads"))) == f"Team\n{text}"


def test_a_chunk_without_title_or_headings_is_its_text() -> None:
    assert chunk_embedding_text(_chunk("id,name\n1,Ada", (), title="")) == "id,name\n1,Ada"
    assert chunk_embedding_text(_chunk("Team", (), title="Team")) == "Team", "a first line naming the title is enough"


def test_an_entity_is_embedded_as_name_label_and_description_always_in_that_shape() -> None:
    assert entity_embedding_text(Entity("e1", "Ada", "Person", "Ada leads Orion.")) == "Ada (Person): Ada leads Orion."
    # The stored shape keeps "()" and ": " when a part is empty: every stored entity vector was computed from it.
    assert entity_embedding_text(Entity("e1", "Ada", "", "")) == "Ada (): "
    assert entity_embedding_text(Entity("e1", "Ada", "Person")) == "Ada (Person): "


def test_the_resolvers_comparison_text_leaves_out_empty_parts() -> None:
    assert entity_comparison_text(Entity("e1", "Ada", "Person", "Ada leads Orion.")) == "Ada (Person): Ada leads Orion."
    assert entity_comparison_text(Entity("e1", "Ada", "", "Ada leads Orion.")) == "Ada: Ada leads Orion."
    assert entity_comparison_text(Entity("e1", "Ada", "Person")) == "Ada (Person)"
    assert entity_comparison_text(Entity("e1", "Ada", "")) == "Ada"


def test_a_community_is_embedded_from_its_reports_title_summary_and_findings() -> None:
    findings = (Finding("Ada leads.", "why"), Finding("Bo builds."))
    report = CommunityReport("Orion team", "Ada leads Orion.", 5.0, findings)
    community = Community("c1", 0, ("e1", "e2"), report=report)
    assert community_report_text(community) == "Orion team\nAda leads Orion.\nAda leads. Bo builds."
    bare = Community("c1", 0, ("e1",), report=CommunityReport("Orion team", "Ada leads Orion.", 5.0))
    assert community_report_text(bare) == "Orion team\nAda leads Orion."


def test_a_community_without_a_report_has_no_text() -> None:
    assert community_report_text(Community("c1", 0, ("e1",))) == ""


def test_a_fact_is_embedded_as_its_statement_then_its_sentence() -> None:
    owns = Fact("r1", "e1", "Victor Hale", "owns", "e2", "Osprey Ceramics", "Victor Hale owns Osprey Ceramics.")
    assert fact_keyword_text(owns) == "Victor Hale owns Osprey Ceramics: Victor Hale owns Osprey Ceramics."
    named = Fact("r2", "e3", "Krill-9", "RELATED_TO", "e4", "Dr. Cathcart")
    assert fact_keyword_text(named) == "Krill-9 related to Dr. Cathcart", "no sentence: the statement alone"
    assert owns.statement == "Victor Hale -[owns]-> Osprey Ceramics"


def test_a_relation_type_reads_as_words_and_a_predicate_phrase_is_kept() -> None:
    assert predicate_words("WORKS_AT") == "works at"
    assert predicate_words("studied at") == "studied at"
    assert predicate_words("replaced ... as") == "replaced ... as"
