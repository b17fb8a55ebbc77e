"""The status of a data dir: counts that match the graph, the ontology the ingestion recorded, and scoped counts."""

from collections import Counter
from pathlib import Path

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.data_models.store_status import RecordedOntology
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.pipelines.config_models import OntologyConfig
from agrag.pipelines.store_status import record_ontology, recorded_ontology, store_status

SCOPE = (document_id_for("team.md", "acme_notes"), document_id_for("sites.csv", "acme_notes"))


def test_the_status_counts_what_the_graph_holds(example_store: KnowledgeStore) -> None:
    graph = example_store.graph
    status = store_status(example_store)
    entities = graph.canonical_entities()
    assert status.documents == 9 and status.scope is None and status.last_ingestion is None
    assert status.chunks == graph.counts()["Chunk"]  # nothing superseded yet
    assert status.entity_labels == dict(Counter(e.label for e in entities).most_common())
    assert status.entities == len(entities)
    assert status.relations == sum(status.relation_types.values()) > 0
    assert status.communities == len(graph.communities()) > 0
    assert status.generation == graph.info()["generation"]
    assert status.ontology == RecordedOntology("open")


def test_a_scoped_status_counts_only_the_scope(example_store: KnowledgeStore) -> None:
    graph = example_store.graph
    scoped = store_status(example_store, EvidenceScope(SCOPE))
    assert scoped.documents == 2 and scoped.scope == tuple(sorted(SCOPE)) and scoped.communities is None
    chunks = [c for d in SCOPE for c in graph.get_chunks(graph.document_chunk_ids(d))]
    assert scoped.chunks == len(chunks)
    visible = graph.entity_ids_of_documents(list(SCOPE))
    assert scoped.entities == len(visible)
    in_scope = [
        r for e in visible for r in graph.relations_of(e) if {c.split(".")[0] for c in r.chunk_ids} <= set(SCOPE)
    ]
    assert 0 < scoped.relations <= len({r.id for r in in_scope})
    nothing = store_status(example_store, EvidenceScope(()))
    assert (nothing.documents, nothing.chunks, nothing.entities, nothing.relations) == (0, 0, 0, 0)


def test_the_ontology_record_round_trips(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")
    try:
        assert recorded_ontology(graph) is None
        ontology = OntologyConfig(
            name="robotics",
            entity_labels=("Person", "Component"),
            relation_types={"OWNS": (("Person", "Component"),)},  # type: ignore[dict-item]
        )
        record_ontology(graph, ontology)
        assert recorded_ontology(graph) == RecordedOntology(
            "robotics", ("Person", "Component"), {"OWNS": (("Person", "Component"),)}
        )
    finally:
        graph.close()
