"""``migrate_vectors``: copy a data dir's vectors into other collections (a Qdrant server) without embedding again.

Each point the graph names (``vector_contents``: the ids ``agrag repair`` walks) is written to the target with the
dense vector read back from the data dir's own store and the keyword text and payload ingestion gives it, so the
target answers every search as the source did and no embedding model is loaded.

A target that already holds points is checked before anything is written:

* points of this data dir (an earlier run that was stopped halfway) are fine: every point is written again, an
  upsert by id, so a second run completes the first;
* any other point means the collection is another data dir's (the same ``vector_store.collection_prefix`` on the
  same server): the migration is refused (``ForeignTargetPointsError``) before it writes anything.

A point the graph names that the source lacks (a damaged data dir) stops the migration (``CorruptedStoreError``,
naming ``agrag repair --all``); nothing is skipped. After copying, each target must hold exactly the points copied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agrag.components.errors import CorruptedStoreError
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_store import VectorCollection, VectorStore
from agrag.components.vector_backend_errors import ForeignTargetPointsError, MigrationIncompleteError
from agrag.flows.vector_contents import POINT_SLICE, CollectionContents, collection_contents

MigrationProgress = Callable[[VectorCollection, int, int], None]
MISSING_FIX = (
    "Run `agrag repair --all` first (it embeds every point the graph names again into the Qdrant Edge shards), then "
    "`agrag migrate-vectors` again."
)


@dataclass(frozen=True, slots=True)
class MigrationTarget:
    """Where the vectors go: the open target collections, and how messages name them.

    Attributes:
        collections: One open store per collection to migrate (any of chunks, entities, communities).
        prefix: The ``vector_store.collection_prefix`` they were opened with; a collection is ``<prefix>_<name>``.
        where: The server's URL, or the folder of qdrant-client's local mode.
    """

    collections: tuple[VectorStore, ...]
    prefix: str
    where: str

    def name(self, collection: VectorCollection) -> str:
        """The target collection's name on the server."""
        return f"{self.prefix}_{collection.value}"


@dataclass(frozen=True, slots=True)
class CollectionMigration:
    """What the migration did to one collection.

    Attributes:
        collection: Which collection.
        copied: Points written to the target: every point the graph names (the target holds exactly these).
        source_points: Points the source held. More than ``copied`` only when it kept points no graph record names
            (left by an ingestion stopped mid-write); those are not searchable data and are not copied.
        resumed: Points of this data dir the target held before (an earlier run that stopped); written again.
    """

    collection: VectorCollection
    copied: int
    source_points: int
    resumed: int

    @property
    def left_out(self) -> int:
        """Source points no graph record names, not copied."""
        return self.source_points - self.copied


@dataclass(frozen=True, slots=True)
class VectorMigration:
    """What ``migrate_vectors`` did, collection by collection, in the order migrated."""

    collections: tuple[CollectionMigration, ...]

    def copied(self) -> dict[str, int]:
        """Points copied per collection name."""
        return {c.collection.value: c.copied for c in self.collections}


@dataclass(frozen=True, slots=True)
class _Plan:
    """One collection checked and ready to copy."""

    contents: CollectionContents
    source: VectorStore
    target: VectorStore
    source_points: int
    resumed: int


def _data_dir(store: KnowledgeStore) -> str:
    return store.spec.data_dir if store.spec is not None else "being migrated"


def _plan(store: KnowledgeStore, target: VectorStore, where: MigrationTarget, size: int) -> _Plan:
    """Check one collection before anything is written: the source holds every point, the target only ours.

    Raises:
        CorruptedStoreError: the source lacks points the graph names.
        ForeignTargetPointsError: the target holds points that are not this data dir's.
    """
    collection = target.collection
    contents = collection_contents(store.graph, collection)
    source = store.vectors(collection)
    missing: list[str] = []
    resumed = 0
    for part in contents.slices(size):
        missing.extend(sorted(set(part) - source.existing_ids(part)))
        resumed += len(target.existing_ids(part))
    if missing:
        damage = (
            f"the {collection.value} vectors lack {len(missing)} of the {len(contents.ids)} points the graph names "
            f"(e.g. {missing[0]}), so they cannot be copied to {where.name(collection)}"
        )
        raise CorruptedStoreError(_data_dir(store), damage, MISSING_FIX)
    held = target.count()
    if held > resumed:
        raise ForeignTargetPointsError(where.name(collection), where.where, held, resumed, where.prefix)
    return _Plan(contents, source, target, source.count(), resumed)


def _copy(store: KnowledgeStore, plan: _Plan, where: MigrationTarget, size: int, tell: MigrationProgress) -> int:
    """Copy one collection a slice at a time: stored dense vectors, the graph's texts and payloads."""
    collection, total, copied = plan.target.collection, len(plan.contents.ids), 0
    if total == 0:
        tell(collection, 0, 0)
    for part in plan.contents.slices(size):
        items = plan.contents.read(part)
        stored = {point.id: point.dense for point in plan.source.fetch(part, with_vectors=True)}
        lacking = [item.id for item in items if len(stored.get(item.id, ())) == 0]
        if lacking:
            damage = f"the {collection.value} vectors cannot read back {len(lacking)} points (e.g. {lacking[0]})"
            raise CorruptedStoreError(_data_dir(store), damage, MISSING_FIX)
        plan.target.upsert([item.with_vector(stored[item.id]) for item in items])
        copied += len(items)
        tell(collection, copied, total)
    held = plan.target.count()
    if held != copied:
        raise MigrationIncompleteError(where.name(collection), where.where, held, copied)
    return copied


def migrate_vectors(
    store: KnowledgeStore,
    target: MigrationTarget,
    progress: MigrationProgress | None = None,
    *,
    slice_size: int = POINT_SLICE,
) -> VectorMigration:
    """Copy the points of ``target``'s collections from ``store``'s vector stores into them, without embedding.

    Every collection is checked first (``_plan``), then copied ``slice_size`` points at a time, then counted: the
    target must hold exactly the points copied. The whole migration holds ``store.reading()``, so it copies one
    committed state. ``store`` itself is not changed; recording the new backend is the caller's step, after this
    returns (``record_vector_backend``).

    Args:
        store: The data dir's open stores (the source).
        target: The open target collections (a subset is migrated alone, e.g. to resume one).
        progress: Told ``(collection, points copied so far, points to copy)`` after each slice.
        slice_size: Points read, fetched and written at a time.

    Raises:
        CorruptedStoreError: the source lacks points the graph names; nothing was written.
        ForeignTargetPointsError: a target holds points that are not this data dir's; nothing was written.
        MigrationIncompleteError: after copying, a target does not hold exactly the points copied.
        StoreError: a store failed to read or write.
    """
    tell = progress or (lambda _collection, _copied, _total: None)
    with store.reading():
        plans = [_plan(store, collection, target, slice_size) for collection in target.collections]
        done = [
            CollectionMigration(
                plan.target.collection, _copy(store, plan, target, slice_size, tell), plan.source_points, plan.resumed
            )
            for plan in plans
        ]
    return VectorMigration(tuple(done))
