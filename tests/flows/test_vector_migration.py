"""`agrag migrate-vectors`: a data dir's vectors move from Qdrant Edge to a Qdrant server unembedded, and it switches.

The server is qdrant-client's local mode in a folder (AGRAG_QDRANT_PATH), as the other qdrant backend tests use.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import ConfigError, CorruptedStoreError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.qdrant_common import ITEM_ID_FIELD
from agrag.components.stores.qdrant_server_vector_store import QdrantServerVectorStore
from agrag.components.stores.vector_store import StoredPoint, VectorCollection, VectorPoint
from agrag.components.vector_backend_errors import (
    AlreadyOnQdrantServerError,
    ForeignTargetPointsError,
    VectorBackendMismatchError,
)
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.server_migration import migrate_to_server, split_overrides
from agrag.flows.vector_contents import collection_contents
from agrag.pipelines.runtime import open_runtime
from agrag.pipelines.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.data_dir_copy import copy_data_dir
from tests.support.isolated_settings import isolated_settings
from tests.support.recipe_answers import assert_same_answers, recipe_answers

QDRANT = "vector_store=qdrant"
# Qdrant normalizes every vector it stores for cosine: a vector already normalized may come back 1 float32 ulp off
FLOAT32_ULP = 1.2e-7


def settings_for(root: Path, *, server: bool = True) -> Settings:
    return isolated_settings(root / "data", qdrant_path=root / "qdrant" if server else None)


@pytest.fixture(scope="module")
def pristine(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Path:
    """The example corpus on Qdrant Edge, then one note changed: superseded chunks, merged entities, communities."""
    root = tmp_path_factory.mktemp("edge")
    folder = root / "notes"
    shutil.copytree(EXAMPLES, folder)
    with open_runtime([], settings_for(root, server=False), require_data=False, embedder=embedder) as runtime:
        ingest_into(str(folder), runtime.config, runtime.store, embedder)
        team = folder / "team.md"
        team.write_text(team.read_text(encoding="utf-8") + "\nTomas Eriksen now also owns Vega Perception.\n")
        ingest_into(str(folder), runtime.config, runtime.store, embedder)
        graph = runtime.store.graph
        chunks = graph.get_chunks(graph.searchable_chunk_ids())
        assert any(not c.current for c in chunks), "the update superseded chunks"
        assert any(merged for _entity, merged in graph.all_entities()), "resolution merged entities"
        assert graph.communities()
    return root / "data"


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Path:
    copy_data_dir(pristine, tmp_path / "data")
    return tmp_path


def _points(store: KnowledgeStore) -> dict[VectorCollection, dict[str, StoredPoint]]:
    """Every point the graph names, with its vector and payload."""
    found = {}
    for collection in VectorCollection:
        ids = list(collection_contents(store.graph, collection).ids)
        found[collection] = {p.id: p for p in store.vectors(collection).fetch(ids, with_vectors=True)}
    return found


def _answers(store_root: Path, overrides: Sequence[str], embedder: SentenceTransformersTextEmbedder) -> Any:
    """What the recipes and the keyword and dense legs find, and every point; on the data dir opened so."""
    with open_runtime(list(overrides), settings_for(store_root), embedder=embedder) as runtime:
        return recipe_answers(runtime, embedder), _points(runtime.store), runtime.store.counts()


def _same_points(before: dict[VectorCollection, dict[str, StoredPoint]], after: Any) -> None:
    for collection, points in before.items():
        assert set(after[collection]) == set(points), collection
        for item_id, point in points.items():
            moved = after[collection][item_id]
            assert moved.payload == point.payload, (collection, item_id)
            assert len(moved.dense) == len(point.dense)
            assert max(abs(a - b) for a, b in zip(moved.dense, point.dense, strict=True)) <= FLOAT32_ULP
            assert math.isclose(sum(a * b for a, b in zip(moved.dense, point.dense, strict=True)), 1.0, abs_tol=1e-6)


def test_the_vectors_move_unembedded_and_every_search_answers_the_same(
    root: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    answers, points, counts = _answers(root, [], embedder)
    told: list[tuple[str, int, int]] = []

    done = migrate_to_server([], settings_for(root), lambda c, n, m: told.append((c.value, n, m)))

    assert done.migration.copied() == {
        "chunks": counts["chunk_vectors"],
        "entities": counts["entity_vectors"],
        "communities": counts["community_vectors"],
        "facts": counts["fact_vectors"],
    }
    assert all(c.left_out == 0 and c.resumed == 0 for c in done.migration.collections)
    assert told == [(name, n, n) for name, n in done.migration.copied().items()]
    assert done.overrides == (QDRANT,) and done.variable == "AGRAG_QDRANT_PATH"
    assert done.kept_shards is not None and done.kept_shards.name.startswith("vectors.edge-")
    assert (done.kept_shards / "chunks" / "segments").is_dir() and not (root / "data" / "vectors").exists()
    superseded = [p for p in points[VectorCollection.CHUNKS].values() if p.payload["status"] == "superseded"]
    merged = [p for p in points[VectorCollection.ENTITIES].values() if p.payload["status"] == "merged"]
    assert superseded and merged and all(ITEM_ID_FIELD in p.payload for p in superseded)

    assert all(scores for scores, _ in answers.values()), "every recipe and leg finds something"
    moved_answers, moved_points, moved_counts = _answers(root, [QDRANT], embedder)
    _same_points(points, moved_points)
    assert_same_answers(answers, moved_answers)
    assert moved_counts == counts

    with pytest.raises(VectorBackendMismatchError, match="Add the override vector_store=qdrant") as refused:
        open_runtime([], settings_for(root), embedder=embedder)
    assert isinstance(refused.value, ConfigError)
    with pytest.raises(AlreadyOnQdrantServerError, match="nothing to migrate"):
        migrate_to_server([], settings_for(root))


class Stopped(Exception):
    """The migration was stopped (as a kill would) after the chunks were copied."""


def test_a_migration_stopped_halfway_completes_when_run_again(
    root: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    _answers_before, points, _counts = _answers(root, [], embedder)

    def stop_after_chunks(collection: VectorCollection, copied: int, total: int) -> None:
        if collection is VectorCollection.CHUNKS and copied == total:
            raise Stopped

    with pytest.raises(Stopped):
        migrate_to_server([], settings_for(root), stop_after_chunks)
    # the data dir still keeps its vectors in the Edge shards, and still opens there
    assert (root / "data" / "vectors" / "chunks" / "segments").is_dir()
    open_runtime([], settings_for(root), embedder=embedder).close()

    done = migrate_to_server([], settings_for(root))
    resumed = {c.collection: c.resumed for c in done.migration.collections}
    assert resumed == {
        VectorCollection.CHUNKS: len(points[VectorCollection.CHUNKS]),
        VectorCollection.ENTITIES: 0,
        VectorCollection.COMMUNITIES: 0,
        VectorCollection.FACTS: 0,
    }
    with open_runtime([QDRANT], settings_for(root), embedder=embedder) as runtime:
        _same_points(points, _points(runtime.store))


def test_a_collection_of_another_data_dir_is_refused_before_anything_is_written(
    root: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    foreign = QdrantServerVectorStore(VectorCollection.ENTITIES, 384, path=root / "qdrant" / "entities")
    foreign.upsert([VectorPoint("someone-else", [1.0] + [0.0] * 383, "Ada (Person): another corpus", {})])
    foreign.close()

    with pytest.raises(ForeignTargetPointsError, match=r"vector_store\.collection_prefix=agrag") as refused:
        migrate_to_server([], settings_for(root))
    assert "agrag_entities" in str(refused.value) and "Nothing was copied" in str(refused.value)
    chunks = QdrantServerVectorStore(VectorCollection.CHUNKS, 384, path=root / "qdrant" / "chunks")
    assert chunks.count() == 0, "nothing was written to any collection"
    chunks.close()
    open_runtime([], settings_for(root), embedder=embedder).close()  # still on Qdrant Edge

    # a prefix of its own for this data dir: the target overrides are honoured, and later commands take them
    done = migrate_to_server(["vector_store.collection_prefix=mine"], settings_for(root))
    assert done.overrides == (QDRANT, "vector_store.collection_prefix=mine")
    with open_runtime([*done.overrides], settings_for(root), embedder=embedder) as runtime:
        assert runtime.store.entities.count() == done.migration.copied()["entities"]


def test_a_point_the_edge_shards_lack_stops_the_migration_and_names_the_repair(
    root: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    with open_runtime([], settings_for(root), embedder=embedder) as runtime:
        graph = runtime.store.graph
        # a superseded chunk: the open check samples current ones, so only the migration's own walk finds it
        lost = next(c.id for c in graph.get_chunks(graph.searchable_chunk_ids()) if not c.current)
        runtime.store.chunks.delete([lost])

    with pytest.raises(CorruptedStoreError, match=r"agrag repair --all") as refused:
        migrate_to_server([], settings_for(root))
    assert lost in str(refused.value) and "Nothing was changed" in str(refused.value)
    open_runtime([], settings_for(root), embedder=embedder).close()  # still on Qdrant Edge


def test_points_no_graph_record_names_are_left_out_and_counted(
    root: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    with open_runtime([], settings_for(root), embedder=embedder) as runtime:
        # what a write stopped between the graph and the vectors leaves: a point of an entity the graph dropped
        runtime.store.entities.upsert([VectorPoint("gone-entity", [1.0] + [0.0] * 383, "Gone (Thing): dropped", {})])
        named = runtime.store.entities.count() - 1

    done = migrate_to_server([], settings_for(root))
    entities = next(c for c in done.migration.collections if c.collection is VectorCollection.ENTITIES)
    assert (entities.copied, entities.source_points, entities.left_out) == (named, named + 1, 1)
    with open_runtime([QDRANT], settings_for(root), embedder=embedder) as runtime:
        assert runtime.store.entities.count() == named
        assert runtime.store.entities.existing_ids(["gone-entity"]) == set()


def test_a_migration_needs_a_server_and_copies_into_it_only(root: Path) -> None:
    with pytest.raises(ConfigError, match="AGRAG_QDRANT_URL") as refused:
        migrate_to_server([], settings_for(root, server=False))
    assert "Nothing was changed" in str(refused.value)
    assert (root / "data" / "vectors" / "chunks" / "segments").is_dir()
    with pytest.raises(ConfigError, match="Leave vector_store=edge out"):
        migrate_to_server(["vector_store=edge"], settings_for(root))


def test_vector_store_overrides_go_to_the_target_the_others_to_both() -> None:
    source, target = split_overrides(["vector_store.collection_prefix=a", "+vector_store.x=1", "embedder.batch_size=8"])
    assert source == ["embedder.batch_size=8", "vector_store=edge"]
    assert target == ["vector_store.collection_prefix=a", "+vector_store.x=1", "embedder.batch_size=8", QDRANT]
