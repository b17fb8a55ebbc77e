"""``migrate_to_server``: move a data dir's vectors from its Qdrant Edge shards to a Qdrant server.

What ``agrag migrate-vectors`` runs. The source is always the data dir's Qdrant Edge shards (``vector_store=edge``);
the command's overrides describe the target (``vector_store=qdrant`` is implied, so ``vector_store.collection_prefix``
or ``vector_store.quantization`` apply to it) and everything else (``embedder.model``...) both sides.

The steps: open the data dir as it is (refused when it is damaged, held by another process, or on a server
already), open the target collections, copy (``migrate_vectors``), and only when every collection holds what was
copied record the new backend in the graph (``record_vector_backend``). Then the Edge shards are renamed
``vectors.edge-<time>`` and kept; nothing reads them any more. A run stopped before the record leaves the data dir
on Qdrant Edge as it was; running the command again completes the migration.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from agrag.components import defaults
from agrag.components.errors import ConfigError
from agrag.components.stores.vector_store import VectorCollection
from agrag.components.vector_backend_errors import AlreadyOnQdrantServerError, VectorBackendMismatchError
from agrag.flows.vector_migration import MigrationProgress, MigrationTarget, VectorMigration, migrate_vectors
from agrag.pipelines.config_models import QdrantVectorStoreConfig
from agrag.pipelines.runtime import Runtime, check_ingested, compose_config, open_runtime
from agrag.pipelines.settings import Settings, load_settings
from agrag.pipelines.store_factory import embedding_dimension, open_vector_store, record_vector_backend

EDGE = "vector_store=edge"
QDRANT = "vector_store=qdrant"
KEPT_SHARDS = "vectors.edge-"


@dataclass(frozen=True, slots=True)
class ServerMigration:
    """What ``migrate_to_server`` did.

    Attributes:
        data_dir: The data dir, which now keeps its vectors on the server.
        where: The server's URL, or the folder of qdrant-client's local mode.
        variable: The setting that names it (``AGRAG_QDRANT_URL`` or ``AGRAG_QDRANT_PATH``), to keep set.
        target: The target's configuration (its prefix names the collections).
        migration: The points copied per collection.
        kept_shards: Where the Qdrant Edge shards are now (renamed ``vectors.edge-<time>``; or left in place as
            ``vectors`` if they could not be renamed); None if the data dir had none.
    """

    data_dir: Path
    where: str
    variable: str
    target: QdrantVectorStoreConfig
    migration: VectorMigration
    kept_shards: Path | None

    @property
    def overrides(self) -> tuple[str, ...]:
        """The overrides every later command needs for this data dir."""
        prefix = self.target.collection_prefix
        return (
            (QDRANT,)
            if prefix == defaults.QDRANT_COLLECTION_PREFIX
            else (QDRANT, f"vector_store.collection_prefix={prefix}")
        )


def _key(override: str) -> str:
    return override.partition("=")[0].lstrip("+~")


def split_overrides(overrides: Sequence[str]) -> tuple[list[str], list[str]]:
    """The overrides of the source (Qdrant Edge) and of the target (Qdrant server) of a migration.

    ``vector_store`` overrides apply to the target only; the others (the embedder...) to both.

    Raises:
        ConfigError: ``vector_store=edge`` was given: the target is always a Qdrant server.
    """
    if EDGE in overrides:
        raise ConfigError(
            "agrag migrate-vectors copies from the data dir's Qdrant Edge shards (vector_store=edge) into a Qdrant "
            "server (vector_store=qdrant); its overrides describe the target. Leave vector_store=edge out."
        )
    shared = [o for o in overrides if _key(o) != "vector_store" and not _key(o).startswith("vector_store.")]
    return [*shared, EDGE], [*overrides, QDRANT]


def _where(settings: Settings) -> str:
    """The target's URL or local folder; refuses when neither is set."""
    agrag = settings.agrag
    if agrag.qdrant_url:
        return agrag.qdrant_url
    if agrag.qdrant_path is not None:
        return str(agrag.qdrant_path)
    raise ConfigError(
        "agrag migrate-vectors copies the vectors into a Qdrant server, but none is set: set AGRAG_QDRANT_URL to its "
        "URL (e.g. http://localhost:6333; and AGRAG_QDRANT_API_KEY if it needs one), or AGRAG_QDRANT_PATH to a "
        "folder for qdrant-client's local mode. Nothing was changed."
    )


def _open_source(overrides: Sequence[str], settings: Settings) -> Runtime:
    """The data dir opened on its Qdrant Edge shards (checked against the graph, so damage is refused here)."""
    try:
        return open_runtime(overrides, settings)
    except VectorBackendMismatchError as exc:
        if exc.recorded != QdrantVectorStoreConfig().backend:
            raise
        shards = settings.agrag.vectors_dir
        raise AlreadyOnQdrantServerError(settings.agrag.data_dir, shards if shards.exists() else None) from exc


def _set_aside(vectors_dir: Path) -> Path | None:
    """Rename the Edge shards ``vectors.edge-<time>``; where they are (in place if the rename failed)."""
    if not vectors_dir.exists():
        return None
    kept = vectors_dir.with_name(f"{KEPT_SHARDS}{time.strftime('%Y%m%dT%H%M%S')}")
    try:
        vectors_dir.rename(kept)
    except OSError:
        return vectors_dir
    return kept


def migrate_to_server(
    overrides: Sequence[str] = (),
    settings: Settings | None = None,
    progress: MigrationProgress | None = None,
) -> ServerMigration:
    """Copy the data dir's vectors from Qdrant Edge to the Qdrant server of the settings, then switch it there.

    Args:
        overrides: The command's Hydra overrides: ``vector_store.*`` ones for the target, the others for both.
        settings: The settings (``AGRAG_DATA_DIR``, ``AGRAG_QDRANT_URL`` or ``AGRAG_QDRANT_PATH``...); read from the
            environment when None.
        progress: Told ``(collection, points copied so far, points to copy)`` after each slice.

    Raises:
        ConfigError: a bad override, ``vector_store=edge``, or neither ``AGRAG_QDRANT_URL`` nor
            ``AGRAG_QDRANT_PATH`` set.
        AlreadyOnQdrantServerError: the data dir's vectors are on a server already.
        NothingIngestedError: the data dir holds nothing.
        StoreLockedError: another process holds the data dir.
        CorruptedStoreError: the data dir's vectors lack points its graph names.
        ForeignTargetPointsError: a target collection holds another data dir's points.
        MigrationIncompleteError: a target collection does not hold what was copied.
        StoreError: the server cannot be reached or fails.
    """
    settings = settings or load_settings()
    source_overrides, target_overrides = split_overrides(overrides)
    target = compose_config(target_overrides, settings).vector_store  # a bad override fails before anything opens
    assert isinstance(target, QdrantVectorStoreConfig)
    check_ingested(settings.agrag)
    where = _where(settings)  # refused before the data dir is opened
    with _open_source(source_overrides, settings) as runtime, ExitStack() as opened:
        # the recorded size: no embedding model is loaded
        dimension = embedding_dimension(runtime.store.graph, runtime.embedder)
        collections = []
        for collection in VectorCollection:
            store = open_vector_store(collection, target, settings.agrag, dimension, settings.retrieval.rrf_k)
            opened.callback(store.close)
            collections.append(store)
        migration = migrate_vectors(
            runtime.store, MigrationTarget(tuple(collections), target.collection_prefix, where), progress
        )
        with runtime.store.writing():
            record_vector_backend(runtime.store.graph, target)
    kept = _set_aside(settings.agrag.vectors_dir)
    variable = "AGRAG_QDRANT_URL" if settings.agrag.qdrant_url else "AGRAG_QDRANT_PATH"
    return ServerMigration(settings.agrag.data_dir, where, variable, target, migration, kept)
