"""``QdrantServerVectorStore``: the same collection interface on a Qdrant server through ``qdrant-client``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.qdrant_collection_settings import QdrantCollectionSettings, VectorQuantization
from agrag.components.errors import ConfigError, StoreError
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
from agrag.components.stores.vector_store import (
    STATUS_FIELD,
    PayloadFilter,
    QueryLeg,
    StoredPoint,
    VectorCollection,
    VectorHit,
    VectorPoint,
)

SCROLL_PAGE = 10_000

try:
    from qdrant_client import QdrantClient, models
except ImportError:  # pragma: no cover - exercised only without the extra
    QdrantClient = None  # type: ignore[assignment,misc]
    models = None  # type: ignore[assignment]


class QdrantServerVectorStore:
    """One collection on a Qdrant server (``url``) or in qdrant-client's local mode (``path``, for tests).

    Uses the same point ids, payloads and BM25 encoding as ``QdrantEdgeVectorStore``, so both backends return the
    same results for the same data.

    Usage:
        ```python
        store = QdrantServerVectorStore(VectorCollection.CHUNKS, dimension=384, url="http://localhost:6333")
        ```
    """

    def __init__(
        self,
        collection: VectorCollection,
        dimension: int,
        *,
        url: str | None = None,
        path: Path | None = None,
        api_key: str | None = None,
        prefix: str = defaults.QDRANT_COLLECTION_PREFIX,
        rrf_k: int = defaults.RRF_K,
        keyword_fields: Sequence[str] = (),
        layout: QdrantCollectionSettings | None = None,
    ) -> None:
        """Open (or create, laid out by ``layout``) the collection ``<prefix>_<collection>``.

        Raises:
            ConfigError: qdrant-client is not installed.
            ComponentConfigError: not exactly one of ``url`` and ``path``.
            StoreError: the server cannot be reached or refuses the collection.
        """
        if QdrantClient is None:
            raise ConfigError("The Qdrant server backend needs qdrant-client: pip install 'agrag[qdrant-server]'.")
        if (url is None) == (path is None):
            raise ComponentConfigError(
                "QdrantServerVectorStore",
                f"it needs exactly one of url or path, got url={url!r} and path={path!r}",
                "Set AGRAG_QDRANT_URL to the server's URL (vector_store=qdrant), or pass path for a local folder.",
            )
        self._collection = collection
        self._name = f"{prefix}_{collection.value}"
        self._where = url or str(path)
        self._rrf_k = rrf_k
        self._bm25 = bm25_encoder()
        try:
            self._client = QdrantClient(url=url, api_key=api_key) if url else QdrantClient(path=str(path))
            if not self._client.collection_exists(self._name):
                self._create(dimension, layout or QdrantCollectionSettings())
            # Local mode (tests) scans anyway and warns about indexes; a server needs them to filter fast.
            indexed = set(self._client.get_collection(self._name).payload_schema) if url else set(keyword_fields)
            for field in keyword_fields:
                if field not in indexed:
                    self._client.create_payload_index(self._name, field, field_schema=models.PayloadSchemaType.KEYWORD)
        except Exception as exc:  # qdrant-client raises many unrelated types (HTTP, gRPC, portalocker)
            raise StoreError(f"Could not open Qdrant collection {self._name} at {self._where}: {exc}") from exc

    def _create(self, dimension: int, layout: QdrantCollectionSettings) -> None:
        quantization = None
        if layout.quantization is VectorQuantization.INT8:
            scalar = models.ScalarQuantizationConfig(type=models.ScalarType.INT8, always_ram=True)
            quantization = models.ScalarQuantization(scalar=scalar)
        self._client.create_collection(
            self._name,
            vectors_config={DENSE_VECTOR: models.VectorParams(size=dimension, distance=models.Distance.COSINE)},
            sparse_vectors_config={KEYWORD_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            on_disk_payload=layout.on_disk_payload,
            hnsw_config=models.HnswConfigDiff(m=layout.hnsw_m, ef_construct=layout.hnsw_ef_construct),
            quantization_config=quantization,
        )

    @property
    def collection(self) -> VectorCollection:
        """Which collection this store holds."""
        return self._collection

    def _sparse(self, text: str, *, query: bool) -> Any:
        vector = self._bm25.embed_query(text) if query else self._bm25.embed_document(text)
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))

    @staticmethod
    def _conditions(pairs: tuple[tuple[str, str | int | tuple[str, ...]], ...]) -> list[Any]:
        return [
            models.FieldCondition(
                key=key,
                match=models.MatchAny(any=list(value)) if isinstance(value, tuple) else models.MatchValue(value=value),
            )
            for key, value in pairs
        ]

    @classmethod
    def _must_not(cls, payload_filter: PayloadFilter) -> list[Any]:
        # "every value is one of these" is "no value is outside them": must_not a match of any value except those
        outside = [
            models.FieldCondition(key=key, match=models.MatchExcept(**{"except": list(values)}))
            for key, values in payload_filter.within
        ]
        return [*cls._conditions(payload_filter.excludes), *outside]

    @classmethod
    def _filter(cls, payload_filter: PayloadFilter | None) -> Any:
        if payload_filter is None or payload_filter.empty:
            return None
        must: list[Any] = cls._conditions(payload_filter.equals)
        if payload_filter.ids is not None:
            must.append(models.HasIdCondition(has_id=[point_uuid(i) for i in payload_filter.ids]))
        return models.Filter(must=must, must_not=cls._must_not(payload_filter))

    def upsert(self, points: Sequence[VectorPoint], status: str | None = None) -> None:
        """Insert or replace points by id; ``status``, if given, is stored in place of each payload's own."""
        if not points:
            return
        replaced = {} if status is None else {STATUS_FIELD: status}
        structs = [
            models.PointStruct(
                id=point_uuid(p.id),
                vector={DENSE_VECTOR: list(p.dense), KEYWORD_VECTOR: self._sparse(p.text, query=False)},
                payload={**p.payload, **replaced, ITEM_ID_FIELD: p.id},
            )
            for p in points
        ]
        try:
            self._client.upsert(self._name, points=structs, wait=True)
        except Exception as exc:
            raise StoreError(f"Could not write to Qdrant collection {self._name} at {self._where}: {exc}") from exc

    def matching_ids(self, payload_filter: PayloadFilter) -> list[str]:
        """The ids of every stored point that passes ``payload_filter``, in any order."""
        found: list[str] = []
        offset = None
        try:
            while True:
                records, offset = self._client.scroll(
                    self._name,
                    scroll_filter=self._filter(payload_filter),
                    limit=SCROLL_PAGE,
                    offset=offset,
                    with_payload=[ITEM_ID_FIELD],
                    with_vectors=False,
                )
                found += [r.payload[ITEM_ID_FIELD] for r in records if r.payload]
                if offset is None:
                    return found
        except Exception as exc:
            raise StoreError(f"Could not read Qdrant collection {self._name} at {self._where}: {exc}") from exc

    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        """Merge ``payload`` into the payload of the given points."""
        if not ids:
            return
        try:
            self._client.set_payload(self._name, payload=payload, points=[point_uuid(i) for i in ids], wait=True)
        except Exception as exc:
            raise StoreError(f"Could not update Qdrant collection {self._name} at {self._where}: {exc}") from exc

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the given points (ids not stored are ignored)."""
        if not ids:
            return
        try:
            self._client.delete(self._name, points_selector=[point_uuid(i) for i in ids], wait=True)
        except Exception as exc:
            raise StoreError(f"Could not delete from Qdrant collection {self._name} at {self._where}: {exc}") from exc

    def query(
        self, dense: Sequence[float], text: str, limit: int, payload_filter: PayloadFilter | None = None
    ) -> list[VectorHit]:
        """Return up to ``limit`` points, ranked by RRF of the dense and keyword legs."""
        query_filter = self._filter(payload_filter)
        candidates = prefetch_limit(limit)
        legs = (self._leg(leg, dense, text) for leg in QueryLeg)
        prefetch = [
            models.Prefetch(query=vector, using=using, limit=candidates, filter=query_filter)
            for using, vector in filter(None, legs)
        ]
        return self._ranked(limit, models.RrfQuery(rrf=models.Rrf(k=self._rrf_k)), prefetch=prefetch)

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
        found = self._leg(leg, dense, text)
        if found is None:
            return []
        using, vector = found
        return self._ranked(limit, vector, using=using, query_filter=self._filter(payload_filter))

    def _leg(self, leg: QueryLeg, dense: Sequence[float], text: str) -> tuple[str, Any] | None:
        """The vector name and query vector of one leg; None for a text with no indexed word."""
        if leg == QueryLeg.DENSE:
            return DENSE_VECTOR, list(dense)
        keyword = self._sparse(text, query=True)
        return (KEYWORD_VECTOR, keyword) if keyword.indices else None

    def _ranked(
        self,
        limit: int,
        query: Any,
        *,
        using: str | None = None,
        prefetch: list[Any] | None = None,
        query_filter: Any = None,
    ) -> list[VectorHit]:
        """Run one query for ``limit`` points plus a margin, and keep the best ``limit`` with ties settled by id."""
        try:
            response = self._client.query_points(
                self._name,
                query=query,
                using=using,
                prefetch=prefetch,
                query_filter=query_filter,
                limit=limit + TIE_MARGIN,
                with_payload=True,
            )
        except Exception as exc:
            raise StoreError(f"Query on Qdrant collection {self._name} at {self._where} failed: {exc}") from exc
        hits = [
            VectorHit(id=p.payload[ITEM_ID_FIELD], score=float(p.score), payload=dict(p.payload))
            for p in response.points
            if p.payload
        ]
        return settle_ties(hits, limit)

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Return which of ``ids`` are stored."""
        if not ids:
            return set()
        try:
            records = self._client.retrieve(self._name, ids=[point_uuid(i) for i in ids], with_payload=[ITEM_ID_FIELD])
        except Exception as exc:
            raise StoreError(f"Could not read Qdrant collection {self._name} at {self._where}: {exc}") from exc
        return {r.payload[ITEM_ID_FIELD] for r in records if r.payload}

    def fetch(self, ids: Sequence[str], with_vectors: bool = False) -> list[StoredPoint]:
        """Return the stored points among ``ids`` with their payloads (and dense vectors if asked), in any order."""
        if not ids:
            return []
        try:
            records = self._client.retrieve(
                self._name,
                ids=[point_uuid(i) for i in ids],
                with_payload=True,
                with_vectors=[DENSE_VECTOR] if with_vectors else False,
            )
        except Exception as exc:
            raise StoreError(f"Could not read Qdrant collection {self._name} at {self._where}: {exc}") from exc
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
        conditions = [models.HasIdCondition(has_id=[point_uuid(i) for i in ids]), *self._conditions(given.equals)]
        try:
            response = self._client.query_points(
                self._name,
                query=list(dense),
                using=DENSE_VECTOR,
                query_filter=models.Filter(must=conditions, must_not=self._must_not(given)),
                limit=len(ids),
                with_payload=[ITEM_ID_FIELD],
            )
        except Exception as exc:
            raise StoreError(f"Query on Qdrant collection {self._name} at {self._where} failed: {exc}") from exc
        return {p.payload[ITEM_ID_FIELD]: float(p.score) for p in response.points if p.payload}

    def count(self) -> int:
        """Return the number of stored points."""
        return int(self._client.count(self._name, exact=True).count)

    def index_pending(self) -> bool:
        """Always False: a Qdrant server indexes its collections in the background (its own optimizers)."""
        return False

    def optimize(self) -> bool:
        """Nothing to do: the server indexes by itself (``index_pending`` is always False)."""
        return False

    def optimize_room(self) -> int:
        """0: the server indexes on its own disk."""
        return 0

    def close(self) -> None:
        """Release the client (and, in local mode, its folder lock)."""
        self._client.close()
