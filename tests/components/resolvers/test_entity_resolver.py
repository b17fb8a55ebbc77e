import json

import pytest

from agrag.components.data_models.entity import Entity, entity_id_for, normalize_name
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import KEPT_APART, MERGED, Resolution
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import ConfigError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.resolvers.entity_resolver import EntityResolver
from tests.support.scripted_llm import scripted_llm


def entity(name: str, label: str = "Name", description: str = "") -> Entity:
    return Entity(entity_id_for(name, label), name, label, description)


def batch(*entities: Entity, mentions: dict[str, int] | None = None) -> Extraction:
    counts = mentions or {}
    return Extraction(
        entities=entities,
        mentions=tuple(Mention("c1", e.id, counts.get(e.name, 1)) for e in entities),
        relations=(),
    )


def resolve(extraction: Extraction, known: list[Entity] | None = None, **kwargs: object) -> Resolution:
    return EntityResolver(**kwargs).run(extraction=extraction, known=known)["resolution"]  # type: ignore[arg-type]


def merges(resolution: Resolution) -> dict[str, tuple[str, str]]:
    """member id -> (resolved id, rule)."""
    return {d.member_id: (d.resolved_id, d.rule) for d in resolution.decisions if d.decision == MERGED}


def candidate_pairs(resolution: Resolution) -> set[frozenset[str]]:
    return {frozenset((c.name, c.other_name)) for c in resolution.candidates}


def test_exact_spellings_merge_without_a_log_line() -> None:
    first, second = entity("Maria Chen", "Person", "short"), entity("maria  chen", "Person", "a longer description")
    assert first.id == second.id
    extraction = Extraction(
        entities=(first, second),
        mentions=(Mention("c1", first.id, 1), Mention("c1", first.id, 2)),
        relations=(
            Relation("r1", first.id, first.id, "KNOWS", ("c2",)),
            Relation("r1", first.id, first.id, "KNOWS", ("c1",)),
        ),
    )
    resolution = resolve(extraction)
    (merged,) = resolution.extraction.entities
    assert merged.description == "a longer description"  # an LLM label keeps the longest description
    assert resolution.extraction.mentions == (Mention("c1", first.id, 3),)
    assert resolution.extraction.relations[0].chunk_ids == ("c1", "c2")
    assert resolution.decisions == () and resolution.candidates == ()


def test_normalized_names_ignore_case_accents_punctuation_and_articles() -> None:
    assert normalize_name("The Orion-Planner") == normalize_name("orion planner")
    assert normalize_name("Tomás Eriksen") == normalize_name("Tomas Eriksen")
    assert entity_id_for("Orion Planner") == entity_id_for("the orion planner")


def test_exact_merge_keeps_the_commonest_spelling_and_sums_mentions_relations_and_about() -> None:
    eid, other = entity_id_for("Orion Planner"), entity_id_for("Maria Chen")
    extraction = Extraction(
        entities=(
            Entity(eid, "orion planner", "Name", "first"),
            Entity(eid, "Orion Planner", "Name", "the second, longer description"),
            Entity(eid, "Orion Planner", "Name", "third"),
            Entity(other, "Maria Chen", "Name", "m"),
        ),
        mentions=(Mention("c1", eid, 1), Mention("c1", eid, 2), Mention("c2", eid, 1)),
        relations=(
            Relation("r1", other, eid, "RELATED_TO", ("c1",), "s1"),
            Relation("r1", other, eid, "RELATED_TO", ("c2",), "s2"),
        ),
        about=(Mention("c1", eid, 1), Mention("c1", eid, 1), Mention("c2", eid, 1)),
    )
    merged = resolve(extraction).extraction
    orion = next(e for e in merged.entities if e.id == eid)
    # A sentence extractor's label keeps the first description, not the longest.
    assert (orion.name, orion.description) == ("Orion Planner", "first")
    assert len(merged.entities) == 2
    assert sorted((m.chunk_id, m.count) for m in merged.mentions) == [("c1", 3), ("c2", 1)]
    (relation,) = merged.relations
    assert (relation.chunk_ids, relation.description) == (("c1", "c2"), "s1")
    assert merged.about == (Mention("c1", eid, 1), Mention("c2", eid, 1))


def test_same_name_different_labels_stay_two_with_a_kept_apart_line() -> None:
    person, org = entity("Jordan Lee", "Person"), entity("Jordan Lee", "Organization")
    resolution = resolve(batch(person, org))
    assert len(resolution.extraction.entities) == 2
    (decision,) = resolution.decisions
    assert decision.decision == KEPT_APART and decision.rule == "homonym"
    assert {decision.member_id, decision.resolved_id} == {person.id, org.id}
    assert "Person" in decision.reason and "Organization" in decision.reason


def test_an_untyped_name_folds_into_the_only_typed_entity() -> None:
    topic, component = entity("Orion Planner", "Topic"), entity("the Orion Planner", "Component")
    resolution = resolve(batch(topic, component, mentions={"Orion Planner": 9}))
    (decision,) = resolution.decisions
    assert (decision.member_id, decision.resolved_id, decision.rule, decision.score) == (
        topic.id,
        component.id,
        "label",
        1.0,
    )
    assert "Topic" in decision.reason and "Component" in decision.reason
    assert {e.id for e in resolution.extraction.entities} == {topic.id, component.id}  # the member stays


def test_an_untyped_name_with_two_typed_namesakes_is_only_a_candidate() -> None:
    name = entity("Jordan Lee", "Name")
    resolution = resolve(batch(name, entity("Jordan Lee", "Person"), entity("Jordan Lee", "Organization")))
    assert merges(resolution) == {}
    assert {c.entity_id for c in resolution.candidates} == {name.id}
    assert len(resolution.candidates) == 2


def test_close_spellings_merge_into_the_more_mentioned() -> None:
    right, typo = entity("Vega Perception Stack"), entity("Vega Perceptoin Stack")
    resolution = resolve(batch(typo, right, mentions={"Vega Perception Stack": 4}))
    assert merges(resolution) == {typo.id: (right.id, "fuzzy")}
    assert resolution.decisions[0].score == pytest.approx(95.24, abs=0.01)


def test_a_transposition_in_a_short_name_is_a_near_miss_at_the_default_threshold() -> None:
    # "perception" -> "perceptoin" costs two indel edits: 93.3, just under 94.
    pair = batch(entity("Vega Perception"), entity("Vega Perceptoin"))
    assert merges(resolve(pair)) == {}
    assert candidate_pairs(resolve(pair)) == {frozenset({"Vega Perception", "Vega Perceptoin"})}
    assert len(merges(resolve(pair, fuzzy_merge_threshold=93.0))) == 1


def test_one_letter_apart_people_are_a_candidate_not_a_merge() -> None:
    resolution = resolve(batch(entity("Maria Chen", "Person"), entity("Mario Chen", "Person")))
    assert merges(resolution) == {}
    (candidate,) = resolution.candidates
    assert (candidate.rule, candidate.score) == ("fuzzy", 90.0)


def test_names_that_differ_by_a_number_never_merge(embedder: SentenceTransformersTextEmbedder) -> None:
    lines = [entity(f"Assembly Line {n}", "Name", "The assembly line in the Lyon plant.") for n in (4, 5)]
    resolution = resolve(batch(*lines, entity("Line 4"), entity("Line 5")), embed=embedder.embed_batch)
    assert merges(resolution) == {}  # the two assembly lines embed at 0.96, but 4 is not 5
    assert candidate_pairs(resolution) == {frozenset({"Assembly Line 4", "Assembly Line 5"})}


def test_different_typed_labels_never_merge_by_spelling() -> None:
    resolution = resolve(batch(entity("Vega Perception Stack", "Component"), entity("Vega Perceptoin Stack", "Team")))
    assert merges(resolution) == {}
    assert len(resolution.candidates) == 1


def test_an_acronym_merges_into_the_only_name_with_its_initials() -> None:
    slam, long = entity("SLAM", "Acronym"), entity("Simultaneous Localization and Mapping", "Topic")
    resolution = resolve(batch(slam, long))
    assert merges(resolution) == {slam.id: (long.id, "acronym")}


def test_initials_alone_do_not_merge_an_acronym_no_passage_defines() -> None:
    dvd, show = entity("DVD", "Acronym"), entity("Da Vinci Demons", "Name")
    apart = Extraction(
        entities=(dvd, show), mentions=(Mention("c1", dvd.id, 1), Mention("c2", show.id, 1)), relations=()
    )
    resolution = resolve(apart)
    assert merges(resolution) == {}
    assert candidate_pairs(resolution) == {frozenset({"DVD", "Da Vinci Demons"})}


def test_an_ambiguous_acronym_is_only_a_candidate() -> None:
    pm = entity("PM", "Acronym")
    resolution = resolve(batch(pm, entity("Project Manager", "Role"), entity("Peter Miller", "Person")))
    assert merges(resolution) == {}
    assert candidate_pairs(resolution) == {frozenset({"PM", "Project Manager"}), frozenset({"PM", "Peter Miller"})}


def test_a_near_miss_merges_when_the_real_embeddings_agree(embedder: SentenceTransformersTextEmbedder) -> None:
    about = "The perception module that fuses lidar and camera data for the robots."
    vega, typo = entity("Vega Perception", "Component", about), entity("Vega Perceptoin", "Component", about)
    maria = entity("Maria Chen", "Person", "Maria Chen wrote the Orion Planner.")
    mario = entity("Mario Chen", "Person", "Mario Chen is the chef of the canteen in Lyon.")
    resolution = resolve(batch(vega, typo, maria, mario, mentions={"Vega Perception": 3}), embed=embedder.embed_batch)
    (decision,) = resolution.decisions
    assert (decision.member_id, decision.resolved_id, decision.rule) == (typo.id, vega.id, "embedding")
    assert decision.score >= 0.9 and "cosine" in decision.reason
    assert candidate_pairs(resolution) == {frozenset({"Maria Chen", "Mario Chen"})}  # cosine 0.33


def yes_to_everything(messages: list[dict[str, str]]) -> str:
    return json.dumps({"same": True, "reason": "both records describe one robotics firm"})


def test_the_llm_is_asked_about_the_strongest_near_misses_within_its_budget() -> None:
    helios, helius = entity("Helios Robotics", "Organization"), entity("Helius Robotics", "Organization")
    near = batch(helios, helius, entity("Maria Chen", "Person"), entity("Mario Chen", "Person"))
    with scripted_llm(yes_to_everything) as server:
        llm = OpenAIChatClient(server.base_url, model="scripted", max_retries=0)
        resolution = resolve(near, llm=llm, llm_max_pairs=1)
    assert len(server.requests) == 1  # 93.3 is asked; 90.0 is beyond the budget
    assert "Helios Robotics" in server.prompts[0] and "Helius Robotics" in server.prompts[0]
    (decision,) = resolution.decisions
    assert decision.rule == "llm" and decision.score == 1.0
    assert {decision.member_id, decision.resolved_id} == {helios.id, helius.id}
    assert "one robotics firm" in decision.reason
    assert candidate_pairs(resolution) == {frozenset({"Maria Chen", "Mario Chen"})}


def test_the_llm_decides_homonyms() -> None:
    person, org = entity("Jordan Lee", "Person"), entity("Jordan Lee", "Organization")

    def no(messages: list[dict[str, str]]) -> str:
        return '```json\n{"same": false, "reason": "a person is not a company"}\n```'

    with scripted_llm(no) as server:
        resolution = resolve(batch(person, org), llm=OpenAIChatClient(server.base_url, "scripted", max_retries=0))
    (decision,) = resolution.decisions
    assert decision.decision == KEPT_APART and "a person is not a company" in decision.reason
    with scripted_llm(yes_to_everything) as server:
        resolution = resolve(batch(person, org), llm=OpenAIChatClient(server.base_url, "scripted", max_retries=0))
    (decision,) = resolution.decisions
    assert (decision.decision, decision.rule) == (MERGED, "llm")


def test_an_unreadable_llm_answer_leaves_the_pair_unmerged() -> None:
    with scripted_llm(lambda messages: "I think so") as server:
        llm = OpenAIChatClient(server.base_url, "scripted", max_retries=0)
        resolution = resolve(batch(entity("Helios Robotics"), entity("Helius Robotics")), llm=llm)
    assert merges(resolution) == {} and len(resolution.candidates) == 1


def test_a_known_entity_is_always_the_target() -> None:
    stored = entity("Vega Perception Stack", "Component")
    typo = entity("Vega Perceptoin Stack", "Component")
    resolution = resolve(batch(typo, mentions={"Vega Perceptoin Stack": 50}), known=[stored])
    assert merges(resolution) == {typo.id: (stored.id, "fuzzy")}
    assert [e.id for e in resolution.extraction.entities] == [typo.id]  # stored entities are not re-emitted


def test_chains_resolve_to_one_final_entity() -> None:
    controller = entity("Atlas Controller", "Component")
    one, two = entity("Atlas Controler"), entity("Atlas Controlr")
    topic = entity("Atlas Controller", "Topic")
    resolution = resolve(batch(two, one, controller, topic, mentions={"Atlas Controlr": 7}))
    # "Atlas Controlr" is only 93.3 from "Atlas Controller", but 96.6 from "Atlas Controler".
    assert {member: resolved for member, (resolved, _) in merges(resolution).items()} == {
        one.id: controller.id,
        two.id: controller.id,
        topic.id: controller.id,
    }
    assert resolution.candidates == ()


def test_a_group_that_joins_another_points_every_member_at_the_final_entity() -> None:
    planner, typo, worse = entity("Orion Planner", "Component"), entity("Orion Plannerr"), entity("Orion Plannerrr")
    resolution = resolve(batch(planner, typo, worse, mentions={"Orion Plannerrr": 5}))
    # The typos meet first (96.6, the most mentioned leads), then their group joins the typed planner (96.3).
    assert {member: resolved for member, (resolved, _) in merges(resolution).items()} == {
        typo.id: planner.id,
        worse.id: planner.id,
    }
    joined = next(d for d in resolution.decisions if d.member_id == worse.id)
    assert "'Orion Plannerrr' joins with 'Orion Plannerr'" in joined.reason


def test_two_known_entities_never_merge_with_each_other() -> None:
    first, second = entity("Vega Perception Stack Module"), entity("Vega Perception Stack Modules")
    new = entity("Vega Perception Stack Modul")
    resolution = resolve(batch(new), known=[first, second])
    assert merges(resolution) == {new.id: (first.id, "fuzzy")}  # 98.2 beats 96.4
    assert [(c.entity_id, c.other_id) for c in resolution.candidates] == [(new.id, second.id)]


def test_disabling_fuzzy_leaves_only_exact_and_label_rules() -> None:
    resolution = resolve(batch(entity("Vega Perception Stack"), entity("Vega Perceptoin Stack")), fuzzy_enabled=False)
    assert resolution.decisions == () and resolution.candidates == ()


def test_the_output_is_deterministic() -> None:
    entities = [entity("Atlas Controller", "Component"), entity("Atlas Controler"), entity("Atlas Controlr")]
    entities += [entity("Maria Chen", "Person"), entity("Mario Chen", "Person"), entity("Jordan Lee", "Person")]
    entities += [entity("Jordan Lee", "Organization")]
    first = resolve(batch(*entities))
    again = resolve(batch(*reversed(entities)))
    assert (first.decisions, first.candidates) == (again.decisions, again.candidates)


def test_bad_thresholds_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="candidate_threshold"):
        EntityResolver(fuzzy_merge_threshold=80.0, fuzzy_candidate_threshold=85.0)
    with pytest.raises(ConfigError, match="max_pairs"):
        EntityResolver(llm_max_pairs=-1)


def test_the_same_words_in_another_order_are_only_a_near_miss_without_embeddings() -> None:
    poet, composer = entity("Samuel Taylor Coleridge", "Name"), entity("Samuel Coleridge Taylor", "Name")
    resolution = resolve(batch(poet, composer))
    assert merges(resolution) == {}
    assert candidate_pairs(resolution) == {frozenset({"Samuel Taylor Coleridge", "Samuel Coleridge Taylor"})}
