import json
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agrag.components.data_models.chunk import SECTION_CHUNK, TABLE_CHUNK, Chunk
from agrag.components.data_models.entity import entity_id_for
from agrag.components.data_models.extraction import ChunkFailure, Extraction, Mention
from agrag.components.data_models.ontology import Ontology, RelationPattern
from agrag.components.data_models.relation import relation_id_for
from agrag.components.errors import ConfigError
from agrag.components.extractors.llm_entity_extractor import LLMEntityExtractor
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from tests.support.scripted_llm import ScriptedLLM, scripted_llm

EMPTY = json.dumps({"entities": [], "relations": []})
ORION = {
    "entities": [
        {"name": "Maria Chen", "label": "Person", "description": "Wrote the planner."},
        {"name": "Orion Planner", "label": "Component", "description": "A route planner."},
    ],
    "relations": [
        {
            "source": "Maria Chen",
            "target": "Orion Planner",
            "type": "WROTE",
            "description": "Maria Chen wrote the Orion Planner.",
        },
        {"source": "Orion Planner", "target": "ROS", "type": "depends on"},
    ],
}
LYON = {
    "entities": [
        {"name": "Lyon", "label": "Location"},
        {"name": "Atlas Controller", "label": "Component"},
    ],
    "relations": [{"source": "Atlas Controller", "target": "Lyon", "type": "LOCATED_IN"}],
}
ANSWERS = {"Maria Chen": ORION, "Lyon": LYON}
ENGINEERING = Ontology(
    entity_labels=("Person", "Component", "Location"),
    relations=(RelationPattern("WROTE", "Person", "Component"), RelationPattern("RELATED_TO")),
)


def chunk(cid: str, text: str, title: str = "Orion Planner", kind: str = "text") -> Chunk:
    return Chunk(cid, "d", "v", text, (title, "History"), int(cid[1:]), 0, len(text), title=title, kind=kind)


CHUNKS = [
    chunk("c0", "Maria Chen wrote the Orion Planner. maria chen tested it."),
    chunk("c1", "Lyon had an outage of the Atlas Controller.", title="Incidents"),
]


def passage(messages: list[dict[str, str]]) -> str:
    return messages[1]["content"]


def gleaning(messages: list[dict[str, str]]) -> bool:
    return "were missed" in messages[-1]["content"]


def keyed(messages: list[dict[str, str]]) -> str:
    """Answers the first round from ANSWERS by a name in the passage; gleaning finds nothing more."""
    if gleaning(messages):
        return EMPTY
    return next(json.dumps(answer) for key, answer in ANSWERS.items() if key in passage(messages))


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm(keyed) as server:
        yield server


def client(server: ScriptedLLM, max_retries: int = 0) -> OpenAIChatClient:
    return OpenAIChatClient(server.base_url, model="scripted", timeout_seconds=10, max_retries=max_retries)


def extract(server: ScriptedLLM, chunks: list[Chunk], **kwargs: Any) -> tuple[Extraction, list[ChunkFailure]]:
    kwargs.setdefault("ontology", ENGINEERING)
    out = LLMEntityExtractor(client(server, kwargs.pop("max_retries", 0)), **kwargs).run(chunks=chunks)
    return out["extraction"], out["failures"]


def test_entities_relations_mentions_and_about_links(llm: ScriptedLLM) -> None:
    extraction, failures = extract(llm, CHUNKS, gleaning_rounds=0)
    assert failures == []
    maria, orion = entity_id_for("Maria Chen", "Person"), entity_id_for("Orion Planner", "Component")
    typed = {(e.name, e.label, e.description) for e in extraction.entities if e.label != "Topic"}
    assert typed == {
        ("Maria Chen", "Person", "Wrote the planner."),
        ("Orion Planner", "Component", "A route planner."),
        ("Lyon", "Location", ""),
        ("Atlas Controller", "Component", ""),
    }
    assert Mention("c0", maria, 2) in extraction.mentions  # case-insensitive count
    assert Mention("c0", orion, 1) in extraction.mentions
    wrote = next(r for r in extraction.relations if r.type == "wrote")
    assert (wrote.id, wrote.source_id, wrote.target_id) == (relation_id_for(maria, orion, "wrote"), maria, orion)
    assert wrote.chunk_ids == ("c0",)
    assert wrote.description == "Maria Chen wrote the Orion Planner."
    located = next(r for r in extraction.relations if r.type == "located in")
    assert located.chunk_ids == ("c1",)
    assert located.target_id == entity_id_for("Lyon", "Location")
    assert {(m.chunk_id, m.entity_id) for m in extraction.about} == {
        ("c0", entity_id_for("Orion Planner")),
        ("c1", entity_id_for("Incidents")),
    }


def test_an_endpoint_the_answer_does_not_list_keeps_an_untyped_id_and_types_become_predicates(
    llm: ScriptedLLM,
) -> None:
    extraction, _ = extract(llm, CHUNKS[:1], gleaning_rounds=0)
    # DEPENDS_ON is written as the rules write a fact's predicate (a closed ontology spells it its own way again)
    depends = next(r for r in extraction.relations if r.type == "depends on")
    assert depends.target_id == entity_id_for("ROS")
    assert entity_id_for("ROS") not in {e.id for e in extraction.entities}


def test_the_rich_prompt_lists_the_declared_labels_and_patterns_and_the_passage(llm: ScriptedLLM) -> None:
    extract(llm, CHUNKS[:1], gleaning_rounds=0)
    system, user = (m["content"] for m in llm.requests[0]["messages"])
    assert "Person, Component, Location" in system
    assert "WROTE (Person -> Component)" in system
    assert "RELATED_TO (any -> any)" in system
    assert '"description"' in system
    assert "Use only these" in system
    assert "Maria Chen wrote the Orion Planner." in user
    assert "Document: Orion Planner" in user
    assert llm.requests[0]["response_format"] == {"type": "json_object"}


def test_an_open_ontology_asks_for_camel_case_labels_and_upper_snake_types(llm: ScriptedLLM) -> None:
    extract(llm, CHUNKS[:1], ontology=Ontology(), gleaning_rounds=0)
    system = llm.requests[0]["messages"][0]["content"]
    assert "CamelCase" in system
    assert "UPPER_SNAKE_CASE" in system
    assert "Use only these" not in system


def test_the_light_prompt_asks_for_no_descriptions(llm: ScriptedLLM) -> None:
    extract(llm, CHUNKS[:1], prompt="light", gleaning_rounds=0)
    system = llm.requests[0]["messages"][0]["content"]
    assert "description" not in system
    assert '{"entities": [{"name": "...", "label": "..."}]' in system


def test_gleaning_adds_what_round_one_missed_and_stops_at_the_first_empty_round() -> None:
    def script(messages: list[dict[str, str]]) -> str:
        rounds = sum(m["role"] == "assistant" for m in messages)
        if rounds == 0:  # the team is missed, but the relation to it is there
            return json.dumps(
                {
                    "entities": [{"name": "Maria Chen", "label": "Person"}],
                    "relations": [{"source": "Maria Chen", "target": "Robotics Team", "type": "MEMBER_OF"}],
                }
            )
        if rounds == 1:
            return json.dumps({"entities": [{"name": "Robotics Team", "label": "Team"}], "relations": []})
        return EMPTY

    with scripted_llm(script) as server:
        extraction, failures = extract(
            server, [chunk("c0", "Maria Chen is in the Robotics Team.")], ontology=Ontology(), gleaning_rounds=3
        )
    assert failures == []
    assert len(server.requests) == 3  # the first, one gleaning round that adds the team, one that adds nothing
    assert "were missed" in server.prompts[1]
    assert server.requests[1]["messages"][2]["role"] == "assistant"
    team = entity_id_for("Robotics Team", "Team")
    assert team in {e.id for e in extraction.entities}
    (member_of,) = extraction.relations
    assert member_of.target_id == team  # mapped to the entity found in round two


def test_an_answer_that_is_not_json_is_asked_again() -> None:
    def script(messages: list[dict[str, str]]) -> str:
        if "not valid JSON" in messages[-1]["content"]:
            return "```json\n" + json.dumps(ORION) + "\n```"
        return "Here are the entities: Maria Chen and the Orion Planner."

    with scripted_llm(script) as server:
        extraction, failures = extract(server, CHUNKS[:1], gleaning_rounds=0)
    assert failures == []
    assert len(server.requests) == 2
    assert server.requests[1]["messages"][-2]["content"].startswith("Here are the entities")
    assert entity_id_for("Maria Chen", "Person") in {e.id for e in extraction.entities}


def test_a_chunk_never_answered_in_json_is_a_failure_and_the_others_are_extracted() -> None:
    def script(messages: list[dict[str, str]]) -> str:
        return "no idea" if "Lyon" in passage(messages) else keyed(messages)

    with scripted_llm(script) as server:
        extraction, failures = extract(server, CHUNKS, gleaning_rounds=0)
    assert [f.chunk_id for f in failures] == ["c1"]
    assert "not valid JSON" in failures[0].reason
    assert len(server.requests) == 3  # c0 once, c1 once and re-asked once
    assert entity_id_for("Maria Chen", "Person") in {e.id for e in extraction.entities}
    assert not [m for m in extraction.mentions if m.chunk_id == "c1"]
    assert ("c1", entity_id_for("Incidents")) in {(m.chunk_id, m.entity_id) for m in extraction.about}


def test_a_failing_llm_call_is_a_failure() -> None:
    def script(messages: list[dict[str, str]]) -> str:
        if "Lyon" in passage(messages):
            raise RuntimeError("model crashed")
        return keyed(messages)

    with scripted_llm(script) as server:
        _, failures = extract(server, CHUNKS, gleaning_rounds=0)
    assert [f.chunk_id for f in failures] == ["c1"]
    assert "model crashed" in failures[0].reason


def test_a_failed_gleaning_round_keeps_the_first_round_and_is_reported() -> None:
    def script(messages: list[dict[str, str]]) -> str:
        if gleaning(messages):
            raise RuntimeError("overloaded")
        return keyed(messages)

    with scripted_llm(script) as server:
        extraction, failures = extract(server, CHUNKS[:1], gleaning_rounds=1)
    assert [f.chunk_id for f in failures] == ["c0"]
    assert "gleaning round 2" in failures[0].reason
    assert entity_id_for("Maria Chen", "Person") in {e.id for e in extraction.entities}


def test_an_http_500_is_retried() -> None:
    with scripted_llm(keyed, fail_first=1) as server:
        extraction, failures = extract(server, CHUNKS[:1], gleaning_rounds=0, max_retries=2)
    assert failures == []
    assert len(server.requests) == 1
    assert entity_id_for("Maria Chen", "Person") in {e.id for e in extraction.entities}


def test_untidy_answers_are_tolerated() -> None:
    answer = {
        "entities": [
            {"name": "Maria  Chen", "label": "person"},  # the declared spelling of the label is used
            {"name": "maria chen", "label": "Person", "description": "duplicate"},
            {"name": 2024, "label": None},
            {"label": "Person"},
            "Orion Planner",
            {"name": "Orion Planner", "label": ["Component"], "description": 7},
        ],
        "relations": [
            {"source": "Maria Chen", "target": "Orion Planner"},
            {"source": "Maria Chen", "type": "WROTE"},
            {"source": "Maria Chen", "target": "maria chen", "type": "IS"},
            None,
        ],
    }
    with scripted_llm(lambda _: json.dumps(answer)) as server:
        extraction, failures = extract(
            server, [chunk("c0", "Maria Chen wrote the Orion Planner in 2024.")], gleaning_rounds=0
        )
    assert failures == []
    typed = [(e.name, e.label, e.description) for e in extraction.entities if e.label != "Topic"]
    assert typed == [("Maria Chen", "Person", ""), ("2024", "Entity", ""), ("Orion Planner", "Entity", "7")]
    (relation,) = extraction.relations  # no endpoint-less relation, no self-loop
    assert relation.type == "RELATED_TO"
    assert (relation.source_id, relation.target_id) == (
        entity_id_for("Maria Chen", "Person"),
        entity_id_for("Orion Planner"),
    )


def test_answers_that_are_not_lists_give_nothing() -> None:
    with scripted_llm(lambda _: json.dumps({"entities": "none", "relations": {}})) as server:
        extraction, failures = extract(server, CHUNKS[:1], gleaning_rounds=0)
    assert failures == []
    assert {e.label for e in extraction.entities} == {"Topic"}
    assert extraction.relations == ()


def test_section_chunks_are_not_sent_but_table_chunks_are(llm: ScriptedLLM) -> None:
    chunks = [
        chunk("c0", "Maria Chen wrote the Orion Planner.", kind=SECTION_CHUNK),
        chunk("c1", "| Maria Chen | Orion Planner |", kind=TABLE_CHUNK),
        chunk("c2", "Lyon had an outage."),
    ]
    seen: list[int] = []
    out = LLMEntityExtractor(client(llm), ENGINEERING, gleaning_rounds=0, progress=seen.append).run(chunks=chunks)
    assert len(llm.requests) == 2
    assert seen == [1, 1]
    assert {m.chunk_id for m in out["extraction"].mentions} == {"c1", "c2"}


def test_concurrent_extraction_gives_the_same_output_as_one_at_a_time() -> None:
    names = ["Maria Chen", "Lyon", "Atlas Controller", "Vega Perception", "Omar Haddad", "Kestrel Bus", "Nadia Roy"]
    chunks = [chunk(f"c{i}", f"{name} met {names[i - 1]}.", title=f"Doc {i % 3}") for i, name in enumerate(names)]
    jitter = random.Random(7)

    def script(messages: list[dict[str, str]]) -> str:
        time.sleep(jitter.random() / 20)  # answers come back out of order
        words = passage(messages).split('"""')[1].strip().rstrip(".").split(" met ")
        if gleaning(messages):
            return json.dumps({"entities": [{"name": words[1], "label": "Person"}], "relations": []})
        return json.dumps(
            {
                "entities": [{"name": words[0], "label": "Person"}],
                "relations": [{"source": words[0], "target": words[1], "type": "MET"}],
            }
        )

    with scripted_llm(script) as server:
        one = extract(server, chunks, ontology=Ontology(), concurrency=1)
        three = extract(server, chunks, ontology=Ontology(), concurrency=3)
    assert one == three
    assert [m.chunk_id for m in one[0].mentions] == [c.id for c in chunks for _ in range(2)]


def test_settings_are_checked(llm: ScriptedLLM) -> None:
    with pytest.raises(ConfigError, match="rich, light"):
        LLMEntityExtractor(client(llm), Ontology(), prompt="verbose")
    with pytest.raises(ConfigError, match="concurrency"):
        LLMEntityExtractor(client(llm), Ontology(), concurrency=0)
    with pytest.raises(ConfigError, match="gleaning_rounds"):
        LLMEntityExtractor(client(llm), Ontology(), gleaning_rounds=-1)
