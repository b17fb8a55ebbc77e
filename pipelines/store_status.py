"""The status of a data dir (``StoreStatus``), and the ontology record an ingestion leaves for it."""

from __future__ import annotations

import json

from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.data_models.ingestion_run import IngestionRun
from agrag.components.data_models.store_status import ONTOLOGY_KEY, RecordedOntology, StoreStatus
from agrag.components.stores.graph_store import GENERATION_KEY, GraphStore
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.config_models import OntologyConfig


def record_ontology(graph: GraphStore, ontology: OntologyConfig) -> None:
    """Record in the graph the ontology an ingestion kept its extraction to, for ``store_status``."""
    graph.set_info({ONTOLOGY_KEY: ontology.model_dump_json()})


def recorded_ontology(graph: GraphStore) -> RecordedOntology | None:
    """The ontology the last ingestion recorded; None if none did (a data dir built before it was recorded)."""
    text = graph.info().get(ONTOLOGY_KEY)
    if not text:
        return None
    ontology = OntologyConfig.model_validate(json.loads(text))
    return RecordedOntology(ontology.name, ontology.entity_labels, dict(ontology.relation_types))


def store_status(
    store: KnowledgeStore, scope: EvidenceScope | None = None, last_ingestion: IngestionRun | None = None
) -> StoreStatus:
    """What ``store`` holds, overall or within ``scope``, with the last ingestion (left out within a scope).

    Usage:
        ```python
        status = store_status(runtime.store, EvidenceScope(("d3f…",)))
        print(status.documents, status.entity_labels)
        ```
    """
    documents = None if scope is None else scope.document_ids
    counts = store.graph.graph_counts(None if documents is None else list(documents))
    facts = store.facts.count() if documents is None else None
    stated = store.graph.supported_relation_count() if documents is None else 0
    return StoreStatus(
        documents=counts.documents,
        chunks=counts.chunks,
        entities=sum(counts.entity_labels.values()),
        relations=sum(counts.relation_types.values()),
        communities=counts.communities,
        entity_labels=counts.entity_labels,
        relation_types=counts.relation_types,
        ontology=recorded_ontology(store.graph),
        generation=store.graph.info().get(GENERATION_KEY, ""),
        # A run's report names the files of every document, so a scoped caller does not see it.
        last_ingestion=last_ingestion if documents is None else None,
        scope=documents,
        facts=facts,
        facts_unsearchable=max(0, stated - (facts or 0)),
    )
