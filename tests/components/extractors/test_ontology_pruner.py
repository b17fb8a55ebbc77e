from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.ontology import (
    DroppedLabel,
    Ontology,
    PrunedReport,
    RelationPattern,
    UndeclaredPattern,
)
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.extractors.ontology_pruner import OntologyPruner
from agrag.pipelines.ontology_hint import keep_hint

ENGINEERING = Ontology(
    entity_labels=("Person", "Team", "Component", "Location"),
    relations=(
        RelationPattern("WROTE", "Person", "Component"),
        RelationPattern("MEMBER_OF", "Person", "Team"),
        RelationPattern("LOCATED_IN", "*", "Location"),
        RelationPattern("RELATED_TO"),
    ),
)
# The same without RELATED_TO: what no pattern allows has nowhere to go and is dropped.
STRICT = Ontology(entity_labels=ENGINEERING.entity_labels, relations=ENGINEERING.relations[:-1])


def entity(name: str, label: str) -> Entity:
    return Entity(entity_id_for(name, label), name, label)


def relation(source: Entity | str, rel_type: str, target: Entity | str, chunk: str = "c1") -> Relation:
    source_id = source.id if isinstance(source, Entity) else entity_id_for(source)
    target_id = target.id if isinstance(target, Entity) else entity_id_for(target)
    return Relation(relation_id_for(source_id, target_id, rel_type), source_id, target_id, rel_type, (chunk,))


def co_occurrence(a: Entity, b: Entity, chunk: str = "c1") -> Relation:
    """The undirected RELATED_TO of two entities: one edge a pair, from the smaller id."""
    first, second = sorted((a.id, b.id))
    return Relation(relation_id_for(first, second, "RELATED_TO"), first, second, "RELATED_TO", (chunk,))


MARIA = entity("Maria Chen", "Person")
OMAR = entity("Omar Haddad", "Person")
ORION = entity("Orion Planner", "Component")
ROBOTICS = entity("Robotics Team", "Team")
LYON = entity("Lyon", "Location")
ACME = entity("Acme", "Organization")
GLOBEX = entity("Globex", "Organization")
SPEC = entity("Orion Spec", "Document")
SLAM = entity("SLAM", "Acronym")
TOPIC = entity("Orion Planner", "Topic")


def prune(extraction: Extraction, ontology: Ontology = ENGINEERING) -> tuple[Extraction, PrunedReport]:
    out = OntologyPruner(ontology).run(extraction=extraction)
    return out["extraction"], out["pruned"]


def test_declared_things_are_kept_and_nothing_is_reported() -> None:
    extraction = Extraction(
        (MARIA, ORION, ROBOTICS, LYON),
        (Mention("c1", MARIA.id, 1),),
        (relation(MARIA, "WROTE", ORION), relation(MARIA, "MEMBER_OF", ROBOTICS), relation(ORION, "LOCATED_IN", LYON)),
    )
    pruned, report = prune(extraction)
    assert pruned == extraction
    assert report == PrunedReport(entities_kept=4, relations_kept=3)
    assert report.empty


def test_undeclared_labels_are_dropped_with_their_mentions_and_one_example_each() -> None:
    extraction = Extraction(
        (MARIA, ACME, GLOBEX, SPEC, ACME),  # Acme twice (two chunks) is one entity
        (Mention("c1", MARIA.id, 1), Mention("c1", ACME.id, 2), Mention("c2", SPEC.id, 1)),
        (),
        (Mention("c1", SPEC.id, 1), Mention("c1", MARIA.id, 1)),
    )
    pruned, report = prune(extraction)
    assert pruned.entities == (MARIA,)
    assert pruned.mentions == (Mention("c1", MARIA.id, 1),)
    assert pruned.about == (Mention("c1", MARIA.id, 1),)
    assert report.entities_kept == 1
    assert report.entities_dropped == 3
    assert report.dropped_labels == (
        DroppedLabel("Organization", 2, "Acme", ("c1",)),
        DroppedLabel("Document", 1, "Orion Spec", ("c1", "c2")),
    )


def test_relations_of_undeclared_patterns_are_dropped_with_one_example_each() -> None:
    extraction = Extraction(
        (MARIA, OMAR, ORION, ROBOTICS),
        (),
        (
            relation(ORION, "WROTE", MARIA),  # the wrong way round
            relation(MARIA, "MANAGES", ROBOTICS),
            relation(OMAR, "MANAGES", ROBOTICS),
            relation(OMAR, "MANAGES", ROBOTICS, chunk="c2"),  # the same relation from another chunk
            relation(MARIA, "WROTE", ORION),
        ),
    )
    pruned, report = prune(extraction, STRICT)
    assert pruned.relations == (relation(MARIA, "WROTE", ORION),)
    assert report.relations_kept == 1
    assert report.relations_dropped == 3
    assert report.relations_generalised == 0
    assert report.undeclared_patterns == (
        UndeclaredPattern("MANAGES", "Person", "Team", 2, "Maria Chen -MANAGES-> Robotics Team", ("c1", "c2")),
        UndeclaredPattern("WROTE", "Component", "Person", 1, "Orion Planner -WROTE-> Maria Chen", ("c1",)),
    )
    assert report.unknown_endpoints == 0


def test_relations_whose_endpoint_is_no_kept_entity_are_unknown_endpoints() -> None:
    extraction = Extraction(
        (MARIA, ORION, SPEC),
        (),
        (
            relation(MARIA, "WROTE", "Vega Perception"),  # never listed as an entity
            relation(MARIA, "RELATED_TO", SPEC),  # the pattern allows it, but Document entities are dropped
            relation(MARIA, "WROTE", ORION),
        ),
    )
    pruned, report = prune(extraction)
    assert pruned.relations == (relation(MARIA, "WROTE", ORION),)
    assert report.unknown_endpoints == 2
    assert report.relations_dropped == 2
    assert report.unknown_endpoint_example == f"Maria Chen -WROTE-> {entity_id_for('Vega Perception')}"
    assert report.undeclared_patterns == ()


def test_a_wildcard_matches_any_typed_label() -> None:
    extraction = Extraction(
        (MARIA, ORION, LYON, ROBOTICS),
        (),
        (
            relation(MARIA, "LOCATED_IN", LYON),
            relation(ORION, "LOCATED_IN", LYON),
            relation(ORION, "LOCATED_IN", ROBOTICS),
        ),
    )
    pruned, report = prune(extraction, STRICT)
    assert [r.source_id for r in pruned.relations] == [MARIA.id, ORION.id]
    assert report.undeclared_patterns == (
        UndeclaredPattern("LOCATED_IN", "Component", "Team", 1, "Orion Planner -LOCATED_IN-> Robotics Team", ("c1",)),
    )


def test_untyped_labels_are_kept_and_match_only_wildcards() -> None:
    extraction = Extraction(
        (TOPIC, SLAM, MARIA, ORION),
        (Mention("c1", SLAM.id, 1),),
        (relation(SLAM, "RELATED_TO", ORION), relation(SLAM, "WROTE", ORION), relation(MARIA, "LOCATED_IN", SLAM)),
        (Mention("c1", TOPIC.id, 1),),
    )
    pruned, report = prune(extraction)
    assert pruned.entities == (TOPIC, SLAM, MARIA, ORION)
    assert pruned.mentions == extraction.mentions
    assert pruned.about == extraction.about
    assert pruned.relations == (
        relation(SLAM, "RELATED_TO", ORION),
        co_occurrence(SLAM, ORION),
        co_occurrence(MARIA, SLAM),
    )
    assert [(p.type, p.source_label, p.target_label, p.kept_as) for p in report.undeclared_patterns] == [
        ("LOCATED_IN", "Person", "Acronym", "RELATED_TO"),
        ("WROTE", "Acronym", "Component", "RELATED_TO"),
    ]


def test_an_open_ontology_keeps_every_typed_thing_but_drops_unknown_endpoints() -> None:
    extraction = Extraction(
        (MARIA, ACME, SPEC),
        (Mention("c1", ACME.id, 1),),
        (relation(MARIA, "MEMBER_OF", ACME), relation(ACME, "PUBLISHED", SPEC), relation(ACME, "OWNS", "Nowhere Inc")),
    )
    pruned, report = prune(extraction, Ontology())
    assert pruned.entities == extraction.entities
    assert pruned.mentions == extraction.mentions
    assert pruned.relations == extraction.relations[:2]
    assert report.entities_dropped == 0
    assert report.relations_dropped == report.unknown_endpoints == 1
    assert report.unknown_endpoint_example == f"Acme -OWNS-> {entity_id_for('Nowhere Inc')}"


def test_declared_labels_with_no_declared_relations_allow_every_relation() -> None:
    ontology = Ontology(entity_labels=("Person", "Organization"))
    extraction = Extraction((MARIA, ACME), (), (relation(MARIA, "FOUNDED", ACME),))
    pruned, report = prune(extraction, ontology)
    assert pruned == extraction
    assert report.empty


def test_each_dropped_row_names_its_documents_and_the_hint_re_extracts_only_those() -> None:
    extraction = Extraction(
        (MARIA, OMAR, ORION, ACME, GLOBEX),
        (Mention("da.v1.c0", ACME.id, 1), Mention("db.v1.c2", GLOBEX.id, 1), Mention("dc.v1.c0", MARIA.id, 1)),
        (relation(MARIA, "MENTORS", OMAR, "dd.v1.c4"), relation(MARIA, "WROTE", ORION, "de.v1.c0")),
    )
    _, report = prune(extraction)
    assert report.dropped_labels == (DroppedLabel("Organization", 2, "Acme", ("da", "db")),)
    assert report.undeclared_patterns == (
        UndeclaredPattern(
            "MENTORS", "Person", "Person", 1, "Maria Chen -MENTORS-> Omar Haddad", ("dd",), kept_as="RELATED_TO"
        ),
    )
    hint = keep_hint(report)  # kept as RELATED_TO, MENTORS itself is still worth declaring
    assert hint is not None and hint.documents == ("da", "db", "dd")
    assert hint.reextract == "agrag reextract da db dd"
    assert hint.command == "agrag ontology add --label Organization --relation MENTORS:Person:Person"


def test_a_predicate_phrase_matches_its_declared_type_whatever_the_case_and_takes_its_spelling() -> None:
    extraction = Extraction(
        (MARIA, ORION, ROBOTICS),
        (),
        (relation(MARIA, "wrote", ORION, "c1"), relation(MARIA, "member of", ROBOTICS, "c2")),
    )
    pruned, report = prune(extraction)
    assert pruned.relations == (
        relation(MARIA, "WROTE", ORION, "c1"),  # the id follows the type, so both spellings merge into one fact
        relation(MARIA, "MEMBER_OF", ROBOTICS, "c2"),
    )
    assert report.empty


def test_an_undeclared_phrase_is_kept_as_an_undirected_related_to_and_reported() -> None:
    owns = relation(ORION, "owns", MARIA)
    extraction = Extraction((MARIA, ORION), (), (owns, relation(ORION, "owns", MARIA, "c2")))
    pruned, report = prune(extraction)
    assert pruned.relations == (co_occurrence(ORION, MARIA), co_occurrence(ORION, MARIA, "c2"))
    assert (report.relations_kept, report.relations_dropped, report.relations_generalised) == (1, 0, 1)
    # reported in the ontology's spelling, the one `ontology add` takes; the example shows the phrase as written
    assert report.undeclared_patterns == (
        UndeclaredPattern(
            "OWNS", "Component", "Person", 1, "Orion Planner -owns-> Maria Chen", ("c1", "c2"), "RELATED_TO"
        ),
    )
    assert not report.empty
    hint = keep_hint(report)
    assert hint is not None and hint.command == "agrag ontology add --relation OWNS:Component:Person"


def test_an_open_ontology_keeps_predicate_phrases_as_they_are() -> None:
    extraction = Extraction((MARIA, ORION), (), (relation(MARIA, "replaces ... as director", ORION),))
    pruned, report = prune(extraction, Ontology())
    assert pruned == extraction
    assert report.empty
