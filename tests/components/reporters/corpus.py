"""A hand-built community in the style of examples/acme_notes, shared by the reporter tests."""

from dataclasses import dataclass
from typing import Any

from agrag.components.data_models.chunk import TABLE_CHUNK, TEXT_CHUNK, Chunk
from agrag.components.data_models.community import Community, community_id_for
from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.relation import Relation, relation_id_for

TEXTS = [
    (
        "orion",
        TEXT_CHUNK,
        "## Overview\n\nThe Orion Planner is the route planner that moves Acme Robotics warehouse\nrobots between pick "
        "stations. The Orion Planner consumes obstacle maps from Vega Perception and sends\nvelocity targets to the "
        "Atlas Controller.",
    ),
    (
        "orion",
        TEXT_CHUNK,
        "## History and Authorship\n\nMaria Chen wrote the Orion Planner in 2023 as a replacement for the old\n"
        "grid-based planner. Tomas Eriksen helped define the obstacle map format, so that Vega Perception\nand the "
        "Orion Planner share one map schema.",
    ),
    (
        "team",
        TABLE_CHUNK,
        "| Component | Owner |\n|-----------|-------|\n"
        "| Orion Planner | Maria Chen |\n| Vega Perception | Tomas Eriksen |",
    ),
    (
        "team",
        TEXT_CHUNK,
        "### Maria Chen\n\nMaria Chen is the tech lead of the robotics software team. She wrote the\norion planner in "
        "2023 and still owns it.",
    ),
    ("team", TEXT_CHUNK, "- Tomas Eriksen owns Vega Perception.\n- He built the lidar and camera fusion pipeline."),
]

PEOPLE = {"Maria Chen": "Person", "Tomas Eriksen": "Person"}
COMPONENTS = {"Orion Planner": "Component", "Vega Perception": "Component", "Atlas Controller": "Component"}


@dataclass
class Corpus:
    entities: list[Entity]
    relations: list[Relation]
    chunks: list[Chunk]
    mentions: list[tuple[str, str]]
    by_name: dict[str, Entity]

    def community(self, *names: str, level: int = 0) -> Community:
        ids = tuple(sorted(self.by_name[n].id for n in names))
        return Community(community_id_for(level, ids), level, ids)

    def inputs(self) -> dict[str, Any]:
        return {
            "entities": self.entities,
            "relations": self.relations,
            "chunks": self.chunks,
            "mentions": self.mentions,
        }


def build_corpus() -> Corpus:
    chunks = []
    for order, (doc, kind, text) in enumerate(TEXTS):
        chunks.append(Chunk(f"{doc}.v1.{order}", doc, "v1", text, (doc,), order, 0, len(text), kind=kind))
    labels = {**PEOPLE, **COMPONENTS, "Kestrel Boards": "Vendor"}
    entities = [
        Entity(
            entity_id_for(name, label), name, label, "A supplier of motor boards." if name == "Kestrel Boards" else ""
        )
        for name, label in labels.items()
    ]
    by_name = {e.name: e for e in entities}
    mentions = [(c.id, e.id) for c in chunks for e in entities if e.name.casefold() in c.text.casefold()]

    def rel(source: str, kind: str, target: str, *orders: int) -> Relation:
        s, t = by_name[source].id, by_name[target].id
        return Relation(
            relation_id_for(s, t, kind), s, t, kind, tuple(chunks[o].id for o in orders), f"{source} {kind}"
        )

    relations = [
        rel("Maria Chen", "WROTE", "Orion Planner", 1, 3),
        rel("Orion Planner", "CONSUMES", "Vega Perception", 0, 1),
        rel("Maria Chen", "OWNS", "Orion Planner", 2),
        rel("Tomas Eriksen", "OWNS", "Vega Perception", 2, 4),
        rel("Tomas Eriksen", "WORKS_WITH", "Kestrel Boards"),
        rel("Orion Planner", "SENDS_TO", "Atlas Controller", 0),
    ]
    return Corpus(entities, relations, chunks, mentions, by_name)


TEAM = ("Maria Chen", "Orion Planner", "Vega Perception", "Tomas Eriksen", "Kestrel Boards")
