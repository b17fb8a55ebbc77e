"""The ontology in force: the configured ontology (``conf/ingest/ontology``) united with ``set_ontology`` additions.

The additions live in the data dir (``KnowledgeStore.ontology``) and only grow, beside the configured ontology the
data dir's ingestions declared (``ontology_base``), which stays in force when a later command names none. Every
ingestion, and every re-extraction, starts from ``in_force(config, store)``, so what an operator or an agent added is
what the extractor is asked for and what the pruner keeps.

Usage:
    ```python
    change = set_ontology(runtime, [LabelSpec(label="Vendor", description="A company that sells us parts")],
                          [RelationSpec(type="SUPPLIES", source="Vendor", target="Component")])
    config = in_force(runtime.config, runtime.store)
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agrag.components.data_models.ontology_additions import (
    WILDCARD,
    AdditionResult,
    AdditionStatus,
    LabelInForce,
    LabelSpec,
    OntologyAdditions,
    OntologyChange,
    OntologyView,
    Origin,
    PatternInForce,
    RelationSpec,
)
from agrag.components.errors import StoreError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.config_models import AgragConfig, OntologyConfig
from agrag.pipelines.ontology_base import configured
from agrag.pipelines.ontology_changes import grow

if TYPE_CHECKING:
    from agrag.pipelines.runtime import Runtime

Results = tuple[AdditionResult, ...]


def additions_of(store: KnowledgeStore) -> OntologyAdditions:
    """What ``set_ontology`` added to this data dir (nothing for a store opened without its ontology file)."""
    return store.ontology.read() if store.ontology is not None else OntologyAdditions()


def united(config: OntologyConfig, additions: OntologyAdditions) -> OntologyConfig:
    """``config`` with ``additions``: more labels, patterns and descriptions, never fewer.

    A side the configuration leaves open (no labels, or no relation types, declared: everything is kept) stays
    open, since declaring a first label would drop every other one; added labels are then suggested to the LLM
    extractor through their descriptions.
    """
    if additions.empty:
        return config
    labels = list(config.entity_labels)
    label_descriptions = dict(config.label_descriptions)
    for spec in additions.labels:
        if config.entity_labels and spec.label not in labels:
            labels.append(spec.label)
        if not label_descriptions.get(spec.label) and (spec.description or not config.entity_labels):
            label_descriptions[spec.label] = spec.description
    relation_types = {rel_type: list(pairs) for rel_type, pairs in config.relation_types.items()}
    relation_descriptions = dict(config.relation_descriptions)
    for rel in additions.relations:
        # a pattern added under another configured ontology may name a label this one lacks: the pattern declares it
        for label in (rel.source, rel.target):
            if config.entity_labels and label != WILDCARD and label not in labels:
                labels.append(label)
        if config.relation_types and (rel.source, rel.target) not in relation_types.get(rel.type, []):
            relation_types.setdefault(rel.type, []).append((rel.source, rel.target))
        if rel.description and not relation_descriptions.get(rel.type):
            relation_descriptions[rel.type] = rel.description
    return OntologyConfig(
        name=config.name,
        entity_labels=tuple(labels),
        relation_types={rel_type: tuple(pairs) for rel_type, pairs in relation_types.items()},
        label_descriptions=label_descriptions,
        relation_descriptions=relation_descriptions,
    )


def in_force(config: AgragConfig, store: KnowledgeStore) -> AgragConfig:
    """``config`` whose ``ingest.ontology`` is the ontology in force: the configured one plus the data dir's additions.

    Raises:
        CorruptedStoreError: the data dir's additions file cannot be read (the message says how to fix it).
    """
    additions = additions_of(store)
    if additions.empty:
        return config
    ontology = united(configured(config.ingest.ontology, additions), additions)
    return config.model_copy(update={"ingest": config.ingest.model_copy(update={"ontology": ontology})})


def ontology_view(config: OntologyConfig, additions: OntologyAdditions) -> OntologyView:
    """The ontology in force, each label and pattern with its description and whether config or an addition gave it."""
    force = united(config, additions)
    configured = set(config.entity_labels)
    labels = [
        LabelInForce(label=label, description=force.label_descriptions.get(label, ""), origin=Origin.CONFIG)
        for label in config.entity_labels
    ]
    labels += [
        LabelInForce(label=spec.label, description=force.label_descriptions.get(spec.label, ""), origin=Origin.ADDED)
        for spec in additions.labels
        if spec.label not in configured
    ]
    relations = [
        PatternInForce(
            type=rel_type,
            source=source,
            target=target,
            description=force.relation_descriptions.get(rel_type, ""),
            origin=Origin.CONFIG,
        )
        for rel_type, pairs in config.relation_types.items()
        for source, target in pairs
    ]
    relations += [
        PatternInForce(
            type=rel.type,
            source=rel.source,
            target=rel.target,
            description=force.relation_descriptions.get(rel.type, ""),
            origin=Origin.ADDED,
        )
        for rel in additions.relations
        if (rel.source, rel.target) not in config.relation_types.get(rel.type, ())
    ]
    return OntologyView(
        name=config.name,
        every_label_allowed=not config.entity_labels,
        every_relation_allowed=not config.relation_types,
        labels=tuple(labels),
        relations=tuple(relations),
    )


def add_to_ontology(
    config: AgragConfig,
    store: KnowledgeStore,
    labels: Sequence[LabelSpec] = (),
    relations: Sequence[RelationSpec] = (),
) -> OntologyChange:
    """Add ``labels`` and ``relations`` to the data dir's ontology (over ``config``'s); see ``set_ontology``."""
    if store.ontology is None:
        raise StoreError("The store was opened without its ontology file; open it with open_knowledge_store.")

    def change(current: OntologyAdditions) -> tuple[OntologyAdditions, tuple[OntologyAdditions, Results]]:
        grown, results = grow(configured(config.ingest.ontology, current), current, labels, relations)
        return grown, (grown, results)

    additions, results = store.ontology.update(change)
    changed = [r for r in results if r.status is not AdditionStatus.ALREADY_PRESENT]
    if not results:
        message = "Nothing was given to add: pass labels and/or relations."
    elif not changed:
        message = "Nothing changed: everything given is already in the ontology."
    else:
        message = (
            f"Added or described {len(changed)} of {len(results)}. Ingestions from now on extract and keep them; "
            "documents ingested before keep what they had until they are ingested again or re-extracted."
        )
    view = ontology_view(configured(config.ingest.ontology, additions), additions)
    return OntologyChange(results=results, ontology=view, message=message)


def set_ontology(
    runtime: Runtime, labels: Sequence[LabelSpec] = (), relations: Sequence[RelationSpec] = ()
) -> OntologyChange:
    """Grow the ontology of ``runtime``'s data dir: add labels (with descriptions) and relation patterns.

    Nothing is ever removed; adding what is already there is reported as ``already_present``. A relation's source
    and target must be declared labels (configured, added before, or added by this call) or ``'*'``.

    Raises:
        InvalidOntologyNameError: a label or type that is not letters, digits and ``_`` starting with a letter.
        ReservedOntologyNameError: a name of one of agrag's own graph tables.
        UndeclaredEndpointError: a relation endpoint the ontology does not declare.
    """
    return add_to_ontology(runtime.config, runtime.store, labels, relations)


def show_ontology(runtime: Runtime) -> OntologyView:
    """The ontology in force in ``runtime``'s data dir under its configuration."""
    additions = additions_of(runtime.store)
    return ontology_view(configured(runtime.config.ingest.ontology, additions), additions)
