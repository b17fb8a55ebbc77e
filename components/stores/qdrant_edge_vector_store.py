"""``QdrantEdgeVectorStore``: the embedded default, a Qdrant Edge shard under the data dir."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from agrag.components import defaults
from agrag.components.data_models.edge_shard_settings import EdgeShardSettings
from agrag.components.data_models.qdrant_collection_settings import VectorQuantization
from agrag.components.disk_space_errors import NOTHING_CHANGED
from agrag.components.errors import StoreError, StoreLockedError
from agrag.components.stores.disk_space import MIB, READ_MARGIN, DiskSpace, is_disk_full, memory_backed
from agrag.components.stores.heap import release_free_heap
from agrag.components.stores.qdrant_common import (
    DENSE_VECTOR,
    ITEM_ID_FIELD,
    KEYWORD_VECTOR,
    TIE_MARGIN,
    bm25_encoder,
    point_uuid,
    prefetch_limit,
    settle_ties,
    stored_points,
)
from agrag.components.stores.qdrant_edge_files import back_populated, populated_holes, segments_size
from agrag.components.stores.vector_store import (
    STATUS_FIELD,
    PayloadFilter,
    QueryLeg,
    StoredPoint,
    VectorCollection,
    VectorHit,
    VectorPoint,
)

UPSERT_SLICE = 500  # points per shard update (one WAL entry each)
PAYLOAD_SLICE = 10_000  # point ids per payload update: a bulk load's million ids are not one WAL entry
SCROLL_PAGE = 10_000
FLOAT_BYTES = 4
# What indexing writes besides its copy of the growing segment: a new growing segment's preallocated files (a
# 32 MiB vector chunk, payload index pages and flags), allocated whole on a memory-backed disk.
NEW_SEGMENT_ROOM = 48 * MIB
# What making a shard writes: 1 MB, and 2 MB more per keyword index (measured: 5.1 MB with two); and one index.
CREATE_ROOM = 8 * MIB
INDEX_ROOM = 4 * MIB


def _conditions(pairs: tuple[tuple[str, str | int | tuple[str, ...]], ...]) -> list[Any]:
    return [
        qe.FieldCondition(
            key=key, match=qe.MatchAny(any=list(value)) if isinstance(value, tuple) else qe.MatchValue(value=value)
        )
        for key, value in pairs
    ]


def _must_not(payload_filter: PayloadFilter) -> list[Any]:
    # "every value is one of these" is "no value is outside them": must_not a match of any value except those
    outside = [qe.FieldCondition(key=key, match=qe.MatchExcept(list(values))) for key, values in payload_filter.within]
    return [*_conditions(payload_filter.excludes), *outside]


def _edge_filter(payload_filter: PayloadFilter | None) -> qe.Filter | None:
    if payload_filter is None or payload_filter.empty:
        return None
    must: list[Any] = _conditions(payload_filter.equals)
    if payload_filter.ids is not None:
        must.append(qe.HasIdCondition({point_uuid(i) for i in payload_filter.ids}))
    return qe.Filter(must=must, must_not=_must_not(payload_filter))


class QdrantEdgeVectorStore:
    """One collection in a Qdrant Edge shard: the real Qdrant engine, in-process, files under ``path``.

    A shard can be open once per process and by one process at a time; a second opener gets a
    ``StoreLockedError`` that says so. Points land in a growing segment that every query scans whole; ``optimize``
    turns a large one into a search segment as ``settings`` say (``EdgeShardSettings``).

    Usage:
        ```python
        store = QdrantEdgeVectorStore(Path(".agrag/vectors/chunks"), VectorCollection.CHUNKS, dimension=384)
        store.upsert([VectorPoint(id="c1", dense=vector, text="Maria Chen wrote the Orion Planner")])
        hits = store.query(query_vector, "who wrote the planner", limit=5)
        store.close()
        ```
    """

    def __init__(
        self,
        path: Path,
        collection: VectorCollection,
        dimension: int,
        rrf_k: int = defaults.RRF_K,
        keyword_fields: Sequence[str] = (),
        *,
        settings: EdgeShardSettings | None = None,
        space: DiskSpace | None = None,
    ) -> None:
        self._path = Path(path)
        self._space = space or DiskSpace(self._path)  # the data dir's, for what its errors say
        self._settings = settings = settings or EdgeShardSettings()
        self._collection = collection
        self._dimension = dimension
        self._rrf_k = rrf_k
        self._bm25 = bm25_encoder()
        quantized = settings.quantization is VectorQuantization.INT8
        rescored = qe.QuantizationSearchParams(rescore=True, oversampling=settings.oversampling)
        self._dense_params = qe.SearchParams(quantization=rescored) if quantized else None
        # The shard is safe for concurrent reads; writes are serialized here so flush/close never race them.
        self._lock = threading.Lock()
        self._shard = self._open()
        try:
            self._index(keyword_fields)
        except StoreError:
            self._shard.close()  # or the shard's lock outlives this failed open
            raise

    @property
    def collection(self) -> VectorCollection:
        """Which collection this store holds."""
        return self._collection

    def _config(self) -> qe.EdgeConfig:
        quantization = (
            qe.ScalarQuantizationConfig(type=qe.ScalarType.Int8, always_ram=True)
            if self._settings.quantization is VectorQuantization.INT8
            else None
        )
        # m=0: no HNSW graph. Building one holds the GIL for the whole optimize (minutes at a million points, no
        # query answered meanwhile); a scan of int8 copies is 4 to 5 times faster than the float32 scan and exact
        # after rescoring.
        return qe.EdgeConfig(
            vectors={DENSE_VECTOR: qe.EdgeVectorParams(size=self._dimension, distance=qe.Distance.Cosine)},
            sparse_vectors={KEYWORD_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            hnsw_config=qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=0),
            quantization_config=quantization,
            optimizers=qe.EdgeOptimizersConfig(indexing_threshold=self._settings.indexing_threshold_kb),
        )

    def _open(self) -> qe.EdgeShard:
        config = self._config()
        exists = (self._path / "segments").exists()
        if not exists:
            self._space.require(CREATE_ROOM, f"make a new vector store at {self._path}")
        try:
            if exists:
                shard = qe.EdgeShard.load(str(self._path), config)
                release_free_heap()  # what replaying the WAL allocated and freed
                return shard
            self._path.mkdir(parents=True, exist_ok=True)
            return qe.EdgeShard.create(str(self._path), config)
        except Exception as exc:  # qdrant_edge raises bare Exception
            if is_disk_full(exc):  # an open rewrites its config file and applies small journals
                raise self._space.ran_out(
                    f"open the vector store at {self._path}", NOTHING_CHANGED, READ_MARGIN
                ) from exc
            if "WouldBlock" in str(exc):
                raise StoreLockedError(
                    f"The vector store at {self._path} is open in another process or elsewhere in this one. "
                    "Stop the other agrag process (ingest or server) or point AGRAG_DATA_DIR elsewhere."
                ) from exc
            raise StoreError(f"Could not open the Qdrant Edge shard at {self._path}: {exc}") from exc

    @staticmethod
    def open_room(path: Path) -> int:
        """Bytes of free disk that opening the shard at ``path`` takes (``CREATE_ROOM`` when it must be made).

        An existing shard takes none unless it is on a memory-backed disk: an open reads its in-memory files whole,
        which on tmpfs allocates their holes (``qdrant_edge_files``); a shard closed by agrag has none left there, one
        copied or killed in a write may have tens of MB.
        """
        if not (Path(path) / "segments").exists():
            return CREATE_ROOM
        return populated_holes(path) if memory_backed(path) else 0

    def optimize_room(self) -> int:
        """Bytes of free disk ``optimize`` may take: a copy of the segments' data and a new growing segment."""
        return 2 * segments_size(self._path) + NEW_SEGMENT_ROOM

    def _full(self, doing: str) -> StoreError:
        """The error for a full disk met while ``doing`` (the shard keeps what its write-ahead log committed)."""
        return self._space.ran_out(f"{doing} at {self._path}")

    def _index(self, fields: Sequence[str]) -> None:
        # Without a payload index, a filtered query scans every point (24 ms instead of under 1 ms at 10k chunks).
        indexed = set(self._shard.info().payload_schema)
        missing = [field for field in fields if field not in indexed]
        if missing:
            self._space.require(INDEX_ROOM * len(missing), f"index {', '.join(missing)} in the vector store")
        for field in missing:
            self._update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword), "index")

    def upsert(self, points: Sequence[VectorPoint], status: str | None = None) -> None:
        """Insert or replace points by id; ``status``, if given, is stored in place of each payload's own."""
        replaced = {} if status is None else {STATUS_FIELD: status}
        # One update per slice: each update is one WAL entry, which the next open reads back whole (a 30,000-point
        # entry took 1.1 GB of heap to replay, kept by the allocator for the life of the process).
        for start in range(0, len(points), UPSERT_SLICE):
            edge_points = [
                qe.Point(
                    point_uuid(p.id),
                    {DENSE_VECTOR: list(p.dense), KEYWORD_VECTOR: self._bm25.embed_document(p.text)},
                    {**p.payload, **replaced, ITEM_ID_FIELD: p.id},
                )
                for p in points[start : start + UPSERT_SLICE]
            ]
            self._update(qe.UpdateOperation.upsert_points(edge_points), "write points to")

    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        """Merge ``payload`` into the payload of the given points."""
        for start in range(0, len(ids), PAYLOAD_SLICE):
            uuids: list[int | uuid.UUID | str] = [point_uuid(i) for i in ids[start : start + PAYLOAD_SLICE]]
            self._update(qe.UpdateOperation.set_payload(uuids, payload), "update payload in")

    def matching_ids(self, payload_filter: PayloadFilter) -> list[str]:
        """The ids of every stored point that passes ``payload_filter``, in any order."""
        found: list[str] = []
        offset = None
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=SCROLL_PAGE, filter=_edge_filter(payload_filter), with_payload=[ITEM_ID_FIELD]
            )
            try:
                records, offset = self._shard.scroll(request)
            except Exception as exc:
                raise StoreError(f"Could not read the Qdrant Edge shard at {self._path}: {exc}") from exc
            found += [r.payload[ITEM_ID_FIELD] for r in records if r.payload]
            if offset is None:
                return found

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the given points (ids not stored are ignored)."""
        if ids:
            self._update(qe.UpdateOperation.delete_points([point_uuid(i) for i in ids]), "delete points from")

    def index_pending(self) -> bool:
        """Whether the growing segment holds more vectors than the indexing threshold: ``optimize`` has work."""
        info = self._shard.info()
        # The count covers both vectors of a point, and a keyword vector is always indexed (an inverted index): what
        # is missing from two per point is the dense vectors still in growing segments (a point whose text has no
        # indexed word has no keyword vector, which can only make this say yes when optimize finds nothing due).
        unindexed = max(0, 2 * int(info.points_count) - int(info.indexed_vectors_count))
        return unindexed * self._dimension * FLOAT_BYTES > self._settings.indexing_threshold_kb * 1024

    def optimize(self) -> bool:
        """Index what the settings say is due (a large growing segment becomes a search segment); True if it did.

        Holds the Python interpreter until done (Qdrant Edge's optimizer does not release it): about 3 s per
        200,000 points with int8 quantization on two cores. Callers hold the write side of the data dir.
        """
        try:
            with self._lock:
                return bool(self._shard.optimize())
        except Exception as exc:
            if is_disk_full(exc):
                raise self._full("index the vector store") from exc
            raise StoreError(f"Could not index the Qdrant Edge shard at {self._path}: {exc}") from exc

    def _update(self, operation: qe.UpdateOperation, what: str) -> None:
        try:
            with self._lock:
                self._shard.update(operation)
        except Exception as exc:
            if is_disk_full(exc):
                raise self._full(f"{what} the vector store") from exc
            raise StoreError(f"Could not {what} the Qdrant Edge shard at {self._path}: {exc}") from exc

    def query(
        self, dense: Sequence[float], text: str, limit: int, payload_filter: PayloadFilter | None = None
    ) -> list[VectorHit]:
        """Return up to ``limit`` points, ranked by RRF of the dense and keyword legs."""
        edge_filter = _edge_filter(payload_filter)
        candidates = prefetch_limit(limit)
        prefetches = [
            qe.Prefetch(limit=candidates, query=leg_query, filter=edge_filter, params=self._params(leg))
            for leg in QueryLeg
            if (leg_query := self._leg_query(leg, dense, text)) is not None
        ]
        # The stub types `query` as Fusion, but Fusion.Rrf is what the engine takes for RRF.
        fusion: Any = qe.Fusion.Rrf(k=self._rrf_k)
        return self._ranked(limit, fusion, prefetches=prefetches)

    def query_leg(
        self,
        leg: QueryLeg,
        dense: Sequence[float],
        text: str,
        limit: int,
        payload_filter: PayloadFilter | None = None,
    ) -> list[VectorHit]:
        """Return up to ``limit`` points by one leg alone, best first, with that leg's own score.

        Cosine of ``dense`` (DENSE) or BM25 of ``text`` (KEYWORD); a text with no indexed word gives no keyword hits.
        """
        leg_query = self._leg_query(leg, dense, text)
        if leg_query is None:
            return []
        return self._ranked(limit, leg_query, edge_filter=_edge_filter(payload_filter), params=self._params(leg))

    def _params(self, leg: QueryLeg) -> qe.SearchParams | None:
        """Rescoring of the int8 scan for the dense leg (ignored by growing segments, which scan float32)."""
        return self._dense_params if leg == QueryLeg.DENSE else None

    def _leg_query(self, leg: QueryLeg, dense: Sequence[float], text: str) -> qe.Query | None:
        """The nearest-neighbour query of one leg; None for a text with no indexed word."""
        if leg == QueryLeg.DENSE:
            return qe.Query.Nearest(list(dense), using=DENSE_VECTOR)
        keyword = self._bm25.embed_query(text)
        return qe.Query.Nearest(keyword, using=KEYWORD_VECTOR) if keyword.indices else None

    def _ranked(
        self,
        limit: int,
        query: qe.Query | qe.Fusion,
        *,
        prefetches: list[qe.Prefetch] | None = None,
        edge_filter: qe.Filter | None = None,
        params: qe.SearchParams | None = None,
    ) -> list[VectorHit]:
        """Run one query for ``limit`` points plus a margin, and keep the best ``limit`` with ties settled by id."""
        request = qe.QueryRequest(
            limit=limit + TIE_MARGIN,
            query=query,
            prefetches=prefetches,
            filter=edge_filter,
            with_payload=True,
            params=params,
        )
        try:
            points = self._shard.query(request)
        except Exception as exc:
            raise StoreError(f"Query on the Qdrant Edge shard at {self._path} failed: {exc}") from exc
        hits = [VectorHit(id=p.payload[ITEM_ID_FIELD], score=p.score, payload=p.payload) for p in points if p.payload]
        return settle_ties(hits, limit)

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Return which of ``ids`` are stored."""
        if not ids:
            return set()
        try:
            records = self._shard.retrieve([point_uuid(i) for i in ids], [ITEM_ID_FIELD], False)
        except Exception as exc:
            raise StoreError(f"Could not read the Qdrant Edge shard at {self._path}: {exc}") from exc
        return {r.payload[ITEM_ID_FIELD] for r in records if r.payload}

    def fetch(self, ids: Sequence[str], with_vectors: bool = False) -> list[StoredPoint]:
        """Return the stored points among ``ids`` with their payloads (and dense vectors if asked), in any order."""
        if not ids:
            return []
        try:
            records = self._shard.retrieve([point_uuid(i) for i in ids], True, with_vectors)
        except Exception as exc:
            raise StoreError(f"Could not read the Qdrant Edge shard at {self._path}: {exc}") from exc
        return stored_points(records)

    def similarities(
        self, dense: Sequence[float], ids: Sequence[str], payload_filter: PayloadFilter | None = None
    ) -> dict[str, float]:
        """Cosine similarity of ``dense`` to each stored point among ``ids`` that passes the filter."""
        given = payload_filter or PayloadFilter()
        if given.ids is not None:  # the filter's own id condition narrows the ids asked for
            ids = [i for i in ids if i in given.ids]
        if not ids:
            return {}
        conditions: list[Any] = [qe.HasIdCondition({point_uuid(i) for i in ids}), *_conditions(given.equals)]
        request = qe.QueryRequest(
            limit=len(ids),
            query=qe.Query.Nearest(list(dense), using=DENSE_VECTOR),
            filter=qe.Filter(must=conditions, must_not=_must_not(given)),
            with_payload=[ITEM_ID_FIELD],
            params=self._dense_params,
        )
        try:
            points = self._shard.query(request)
        except Exception as exc:
            raise StoreError(f"Query on the Qdrant Edge shard at {self._path} failed: {exc}") from exc
        return {p.payload[ITEM_ID_FIELD]: float(p.score) for p in points if p.payload}

    def count(self) -> int:
        """Return the number of stored points."""
        return int(self._shard.info().points_count)

    def close(self) -> None:
        """Flush and release the shard; on a memory-backed disk, allocate what its next open would (see ``open_room``).

        That allocation is best effort: without room for it, the next open says how much it needs instead.
        """
        with self._lock:
            try:
                self._shard.flush()
                self._shard.close()
            except Exception as exc:
                if is_disk_full(exc):
                    raise self._full("flush the vector store") from exc
                raise StoreError(f"Could not close the Qdrant Edge shard at {self._path}: {exc}") from exc
        if memory_backed(self._path):
            back_populated(self._path)
