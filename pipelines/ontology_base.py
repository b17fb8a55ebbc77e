"""The configured ontology a data dir remembers: the union of every ``conf/ingest/ontology`` its ingestions declared.

A data dir built with ``ingest/ontology=engineering`` keeps engineering in force for every later command that names
no ontology (the default ``open`` one declares nothing), so ``agrag ontology add``, ``agrag reextract`` or a later
``agrag ingest`` do not need the override again. A command that declares another ontology adds to it: like the
additions of ``set_ontology``, what is in force only grows.
"""

from __future__ import annotations

from agrag.components.data_models.ontology_additions import (
    MAX_DESCRIPTION_CHARS,
    LabelSpec,
    OntologyAdditions,
    RelationSpec,
)
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.config_models import OntologyConfig


def declares(ontology: OntologyConfig) -> bool:
    """True when ``ontology`` declares labels or relation types (the ``open`` one declares none)."""
    return bool(ontology.entity_labels or ontology.relation_types)


def remembered(additions: OntologyAdditions) -> OntologyConfig:
    """The remembered configured ontology (declaring nothing when none was remembered)."""
    relation_types: dict[str, list[tuple[str, str]]] = {}
    for rel in additions.base_relations:
        relation_types.setdefault(rel.type, []).append((rel.source, rel.target))
    return OntologyConfig(
        name=additions.base_name or "open",
        entity_labels=tuple(spec.label for spec in additions.base_labels),
        relation_types={rel_type: tuple(pairs) for rel_type, pairs in relation_types.items()},
        label_descriptions={spec.label: spec.description for spec in additions.base_labels if spec.description},
        relation_descriptions={rel.type: rel.description for rel in additions.base_relations if rel.description},
    )


def configured(config: OntologyConfig, additions: OntologyAdditions) -> OntologyConfig:
    """The configured side of the ontology in force: ``config`` united with what the data dir remembers."""
    base = remembered(additions)
    if not declares(base):
        return config
    if not declares(config):
        return base
    labels = list(base.entity_labels) + [label for label in config.entity_labels if label not in base.entity_labels]
    relation_types = {rel_type: list(pairs) for rel_type, pairs in base.relation_types.items()}
    for rel_type, pairs in config.relation_types.items():
        known = relation_types.setdefault(rel_type, [])
        known += [pair for pair in pairs if pair not in known]
    return OntologyConfig(
        name=config.name if config.name == base.name else f"{base.name}+{config.name}",
        entity_labels=tuple(labels),
        relation_types={rel_type: tuple(pairs) for rel_type, pairs in relation_types.items()},
        label_descriptions={**config.label_descriptions, **base.label_descriptions},
        relation_descriptions={**config.relation_descriptions, **base.relation_descriptions},
    )


def remember(config: OntologyConfig, store: KnowledgeStore) -> None:
    """Remember ``config`` (with what was remembered before) as the data dir's configured ontology.

    Called by ingestion: a configured ontology that declares nothing leaves the memory as it is.
    """
    if store.ontology is None or not declares(config):
        return

    def change(current: OntologyAdditions) -> tuple[OntologyAdditions, None]:
        merged = configured(config, current)
        base = current.model_copy(
            update={
                "base_name": merged.name,
                "base_labels": tuple(
                    LabelSpec(label=label, description=merged.label_descriptions.get(label, "")[:MAX_DESCRIPTION_CHARS])
                    for label in merged.entity_labels
                ),
                "base_relations": tuple(
                    RelationSpec(
                        type=rel_type,
                        source=source,
                        target=target,
                        description=merged.relation_descriptions.get(rel_type, "")[:MAX_DESCRIPTION_CHARS],
                    )
                    for rel_type, pairs in merged.relation_types.items()
                    for source, target in pairs
                ),
            }
        )
        return base, None

    store.ontology.update(change)
