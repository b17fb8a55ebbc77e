"""The ontology that grows: stored in the data dir, only growing, names checked, and kept by the next ingestion."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.ontology import DroppedLabel, PrunedReport, UndeclaredPattern
from agrag.components.data_models.ontology_additions import AdditionStatus, LabelSpec, Origin, RelationSpec
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import CorruptedStoreError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.ontology_errors import (
    InvalidOntologyNameError,
    OntologyError,
    ReservedOntologyNameError,
    UndeclaredEndpointError,
)
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.ingest_report_markdown import ingest_report_markdown
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.ontology_changes import OWN_TABLES
from agrag.pipelines.ontology_hint import keep_hint
from agrag.pipelines.ontology_in_force import add_to_ontology, additions_of, in_force
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from agrag.pipelines.store_status import store_status
from tests.support import example_llm
from tests.support.scripted_llm import ScriptedLLM, scripted_llm

ENGINEERING = ["ingest/ontology=engineering"]


def open_store(data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> KnowledgeStore:
    return open_knowledge_store(AgragSettings(data_dir=data_dir), load_config().vector_store, embedder)


@pytest.fixture
def store(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[KnowledgeStore]:
    opened = open_store(tmp_path / "data", embedder)
    yield opened
    opened.close()


def test_additions_survive_reopening_and_unite_with_the_configured_ontology(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    config = load_config(ENGINEERING)
    with open_store(tmp_path / "data", embedder) as store:
        change = add_to_ontology(
            config,
            store,
            [LabelSpec(label="Vendor", description="A company that sells us parts")],
            [RelationSpec(type="SUPPLIES", source="Vendor", target="Component", description="sells to us")],
        )
    assert [(r.name, r.status) for r in change.results] == [
        ("Vendor", AdditionStatus.ADDED),
        ("(Vendor)-[SUPPLIES]->(Component)", AdditionStatus.ADDED),
    ]
    with open_store(tmp_path / "data", embedder) as store:
        ontology = in_force(config, store).ingest.ontology
        again = add_to_ontology(config, store, [LabelSpec(label="Vendor")], [])
    configured = config.ingest.ontology
    assert ontology.entity_labels == (*configured.entity_labels, "Vendor")
    assert ontology.relation_types["SUPPLIES"] == (("Vendor", "Component"),)
    assert ontology.relation_types["OWNS"] == configured.relation_types["OWNS"]  # nothing configured is lost
    assert ontology.label_descriptions == {"Vendor": "A company that sells us parts"}
    assert ontology.relation_descriptions == {"SUPPLIES": "sells to us"}
    assert ontology.name == "engineering"
    assert [r.status for r in again.results] == [AdditionStatus.ALREADY_PRESENT]
    origins = {label.label: label.origin for label in again.ontology.labels}
    assert origins["Vendor"] is Origin.ADDED and origins["Person"] is Origin.CONFIG


def test_additions_only_grow(store: KnowledgeStore) -> None:
    config = load_config(ENGINEERING)
    add_to_ontology(config, store, [LabelSpec(label="Vendor")], [RelationSpec(type="SUPPLIES", source="Vendor")])
    before = additions_of(store)
    # the same again, a configured label and pattern, a case variant: nothing changes, each said so
    change = add_to_ontology(
        config,
        store,
        [LabelSpec(label="Vendor"), LabelSpec(label="person"), LabelSpec(label="Name")],
        [RelationSpec(type="SUPPLIES", source="Vendor"), RelationSpec(type="OWNS", source="Team", target="Component")],
    )
    assert not change.changed and additions_of(store) == before
    assert "declared as 'Person'" in change.results[1].note
    assert "always kept" in change.results[2].note
    # a description is added where there was none, never replaced
    described = add_to_ontology(config, store, [LabelSpec(label="Vendor", description="Sells parts")], [])
    assert described.results[0].status is AdditionStatus.DESCRIBED
    kept = add_to_ontology(config, store, [LabelSpec(label="Vendor", description="Something else")], [])
    assert kept.results[0].status is AdditionStatus.ALREADY_PRESENT and "stays as it was" in kept.results[0].note
    assert in_force(config, store).ingest.ontology.label_descriptions == {"Vendor": "Sells parts"}
    # an open configuration stays open: a first declared label would drop every other one
    open_force = in_force(load_config(), store).ingest.ontology
    assert open_force.entity_labels == () and open_force.relation_types == {}
    assert open_force.label_descriptions == {"Vendor": "Sells parts"}  # suggested to the extractor


@pytest.mark.parametrize(
    ("labels", "relations", "error", "words"),
    [
        ([LabelSpec(label="Vendor Co")], [], InvalidOntologyNameError, "letters, digits and underscores"),
        ([LabelSpec(label="9Lives")], [], InvalidOntologyNameError, "starting with a letter"),
        ([LabelSpec(label="V" * 65)], [], InvalidOntologyNameError, "at most 64"),
        ([LabelSpec(label="chunk")], [], ReservedOntologyNameError, "agrag's own graph tables"),
        ([LabelSpec(label="Document")], [], ReservedOntologyNameError, "Pick another name"),
        ([], [RelationSpec(type="mentions")], ReservedOntologyNameError, "'mentions'"),
        ([], [RelationSpec(type="SUPPLIES", source="Vendor")], UndeclaredEndpointError, "--label Vendor"),
        ([], [RelationSpec(type="SUPPLIES", source="Name")], OntologyError, "Use '*' there"),
        ([], [RelationSpec(type="SUPPLIES-TO")], InvalidOntologyNameError, "'SUPPLIES_TO'"),
    ],
)
def test_bad_names_and_endpoints_are_refused_with_typed_errors_and_nothing_is_stored(
    store: KnowledgeStore,
    labels: list[LabelSpec],
    relations: list[RelationSpec],
    error: type[OntologyError],
    words: str,
) -> None:
    good = [LabelSpec(label="Vendor2")]  # refused with the bad item: a call is all or nothing
    with pytest.raises(error, match=words.replace("*", r"\*").replace("(", r"\(")):
        add_to_ontology(load_config(ENGINEERING), store, good + labels, relations)
    assert additions_of(store).empty


def test_own_table_names_come_from_the_schema() -> None:
    assert {"Document", "Chunk", "Entity", "StoreInfo", "RELATED", "MENTIONS", "IN_COMMUNITY"} <= OWN_TABLES


def test_a_damaged_additions_file_is_a_typed_error_naming_the_fix(store: KnowledgeStore) -> None:
    assert store.ontology is not None
    store.ontology.path.write_text("{not json", encoding="utf-8")
    with pytest.raises(CorruptedStoreError, match="agrag ontology add"):
        in_force(load_config(ENGINEERING), store)


def test_the_hint_gives_the_exact_call_and_command() -> None:
    pruned = PrunedReport(
        entities_dropped=3,
        relations_dropped=3,
        dropped_labels=(DroppedLabel("Date", 2, "2024"), DroppedLabel("Price Tag", 1, "$5")),
        undeclared_patterns=(
            UndeclaredPattern("MENTORS", "Person", "Person", 1, "Lena -MENTORS-> Maria"),
            UndeclaredPattern("CITES", "Name", "Date", 1, "X -CITES-> 2024"),
        ),
    )
    hint = keep_hint(pruned)
    assert hint is not None
    assert json.loads(hint.arguments) == {
        "labels": [{"label": "Date"}],
        "relations": [
            {"type": "MENTORS", "source": "Person", "target": "Person"},
            {"type": "CITES", "source": "*", "target": "Date"},  # an untyped endpoint is matched by '*' only
        ],
    }
    assert hint.command == "agrag ontology add --label Date --relation MENTORS:Person:Person --relation 'CITES:*:Date'"
    assert hint.skipped == ("label 'Price Tag' (not a valid name)",)
    assert keep_hint(PrunedReport(entities_kept=4)) is None


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm(example_llm.answer) as server:
        yield server


@pytest.mark.slow
def test_after_set_ontology_the_next_ingestion_keeps_what_was_pruned(
    prefect_harness: None,
    tmp_path: Path,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    llm: ScriptedLLM,
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    page = folder / "mentors.md"
    page.write_text("# Mentoring\n\nLena Brandt mentors Maria Chen since 2024.\n", encoding="utf-8")
    config = load_config(["ingest/extractor=llm", *ENGINEERING, "ingest.communities.enabled=false"])
    client = OpenAIChatClient(llm.base_url, "scripted", max_retries=0)

    first = ingest_into(str(folder), config, store, embedder, llm=client)
    assert [d.label for d in first.pruned.dropped_labels] == ["Date"]
    assert [(p.type, p.source_label, p.target_label) for p in first.pruned.undeclared_patterns] == [
        ("MENTORS", "Person", "Person")
    ]
    hint = first.pruned.hint
    assert hint is not None and hint.command == "agrag ontology add --label Date --relation MENTORS:Person:Person"
    markdown = ingest_report_markdown(first, str(tmp_path / "data"))
    assert hint.command in markdown and hint.arguments in markdown
    assert "MENTORS" not in store_status(store, None, None).relation_types

    # the hint's own arguments, as an agent would send them
    arguments = json.loads(hint.arguments)
    add_to_ontology(
        config,
        store,
        [LabelSpec(label="Date", description="A calendar date or year")],
        [RelationSpec.model_validate(r) for r in arguments["relations"]],
    )
    page.write_text("# Mentoring\n\nLena Brandt mentors Maria Chen since 2024, every week.\n", encoding="utf-8")
    second = ingest_into(str(folder), config, store, embedder, llm=client)

    assert second.pruned.dropped_labels == () and second.pruned.undeclared_patterns == ()
    assert second.pruned.hint is None
    status = store_status(store, None, None)
    assert status.relation_types.get("MENTORS") == 1 and status.entity_labels.get("Date") == 1
    prompts = [r["messages"][0]["content"] for r in llm.requests[-2:]]
    assert any("Date: A calendar date or year" in p and "MENTORS (Person -> Person)" in p for p in prompts)
    recorded = json.loads(store.graph.info()["ontology"])
    assert "Date" in recorded["entity_labels"] and "MENTORS" in recorded["relation_types"]
