from agrag.components.data_models.entity import Entity, entity_id_for, normalize_name
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.relation import Relation
from agrag.components.resolvers.exact_name_resolver import ExactNameResolver


def test_normalized_names_ignore_case_accents_punctuation_and_articles() -> None:
    assert normalize_name("The Orion-Planner") == normalize_name("orion planner")
    assert normalize_name("Tomás Eriksen") == normalize_name("Tomas Eriksen")
    assert entity_id_for("Orion Planner") == entity_id_for("the orion planner")


def test_merges_spellings_mentions_and_relation_support() -> None:
    eid = entity_id_for("Orion Planner")
    other = entity_id_for("Maria Chen")
    extraction = Extraction(
        entities=(
            Entity(eid, "Orion Planner", "Name", "first"),
            Entity(eid, "orion planner", "Name", "second"),
            Entity(eid, "Orion Planner", "Name", "third"),
            Entity(other, "Maria Chen", "Name", "m"),
        ),
        mentions=(Mention("c1", eid, 1), Mention("c1", eid, 2), Mention("c2", eid, 1)),
        relations=(
            Relation("r1", other, eid, "RELATED_TO", ("c1",), "s1"),
            Relation("r1", other, eid, "RELATED_TO", ("c2",), "s2"),
        ),
    )
    merged = ExactNameResolver().run(extraction=extraction)["extraction"]
    orion = next(e for e in merged.entities if e.id == eid)
    assert (orion.name, orion.description) == ("Orion Planner", "first")
    assert len(merged.entities) == 2
    assert sorted((m.chunk_id, m.count) for m in merged.mentions) == [("c1", 3), ("c2", 1)]
    (relation,) = merged.relations
    assert relation.chunk_ids == ("c1", "c2")
