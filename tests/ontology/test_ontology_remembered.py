"""A data dir keeps the configured ontology its ingestions declared in force: later commands need no override."""

from __future__ import annotations

from pathlib import Path

from agrag.components.data_models.ontology_additions import Origin, RelationSpec
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.ontology_base import remember
from agrag.pipelines.ontology_in_force import add_to_ontology, in_force
from tests.ontology.test_ontology_growth import ENGINEERING, open_store


def test_the_ontology_an_ingestion_declared_stays_in_force_without_the_override(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    engineering = load_config(ENGINEERING).ingest.ontology
    default = load_config()  # ingest/ontology=open: it declares nothing
    with open_store(tmp_path / "data", embedder) as store:
        assert in_force(default, store).ingest.ontology == default.ingest.ontology, "nothing remembered yet"
        remember(default.ingest.ontology, store)  # an open ontology leaves the memory as it is
        assert in_force(default, store).ingest.ontology == default.ingest.ontology
        remember(engineering, store)  # what `ingest_into` does under ingest/ontology=engineering

    with open_store(tmp_path / "data", embedder) as store:
        ontology = in_force(default, store).ingest.ontology
        assert ontology.entity_labels == engineering.entity_labels
        assert ontology.relation_types == engineering.relation_types
        # a pattern between configured labels is accepted with no override, and shown as added beside the config
        change = add_to_ontology(
            default, store, relations=[RelationSpec(type="MENTORS", source="Person", target="Person")]
        )
        origins = {(p.type, p.source, p.target): p.origin for p in change.ontology.relations}
        assert origins[("MENTORS", "Person", "Person")] is Origin.ADDED
        assert origins[("WROTE", "Person", "Component")] is Origin.CONFIG
        assert ("Person", "Person") in in_force(default, store).ingest.ontology.relation_types["MENTORS"]
        # another configured ontology adds to the remembered one; nothing is taken away
        other = load_config(["ingest.ontology.entity_labels=[Vendor]", "ingest.ontology.relation_types={}"])
        remember(other.ingest.ontology, store)
        labels = in_force(default, store).ingest.ontology.entity_labels
        assert "Vendor" in labels and set(engineering.entity_labels) <= set(labels)
