"""The write floor of ``scale_bench.py``: the rows an ingestion stored, written again with the engines' bulk paths.

After the real ingestion, every table of its Kùzu graph is exported to Parquet and every point of its three Qdrant
Edge shards is read back with its vectors and payload (untimed). Then, timed, into a fresh data dir: Kùzu's
``COPY FROM`` of each table into agrag's schema (nodes before relations), and one Edge ``upsert_points`` per batch
of ``POINT_BATCH`` points into new shards made with agrag's own shard settings (each batch read back untimed just
before its upsert). That is the least a store write of
these rows costs here; the ingest write stage is compared with it.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import kuzu
import qdrant_edge as qe

from agrag.components.stores.kuzu.schema_cypher import NODE_TABLES, REL_TABLES, SCHEMA
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.vector_store import VectorCollection
from agrag.pipelines.store_factory import KEYWORD_FIELDS

POINT_BATCH = 1024
_ENDS = {  # the node tables a relation table joins
    "HAS_CHUNK": ("Document", "Chunk"),
    "NEXT": ("Chunk", "Chunk"),
    "PARENT": ("Chunk", "Chunk"),
    "MENTIONS": ("Chunk", "Entity"),
    "ABOUT": ("Chunk", "Entity"),
    "RELATED": ("Entity", "Entity"),
    "IN_COMMUNITY": ("Entity", "Community"),
}


def _columns(conn: kuzu.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f"CALL table_info('{table}') RETURN *").get_all()]


def export_graph(graph_path: Path, out: Path) -> dict[str, int]:
    """Every node and relation table of the graph at ``graph_path`` as ``out/<table>.parquet``; rows per table."""
    out.mkdir(parents=True, exist_ok=True)
    conn = kuzu.Connection(kuzu.Database(str(graph_path), read_only=True))
    rows: dict[str, int] = {}
    for table in (*NODE_TABLES, *REL_TABLES):
        if table in NODE_TABLES:
            pattern = f"(n:{table})"
            select = ", ".join(f"n.{c} AS {c}" for c in _columns(conn, table))
        else:
            start, end = _ENDS[table]
            pattern = f"(a:{start})-[r:{table}]->(b:{end})"
            select = "a.id AS from_id, b.id AS to_id" + "".join(f", r.{c} AS {c}" for c in _columns(conn, table))
        rows[table] = int(conn.execute(f"MATCH {pattern} RETURN count(*)").get_next()[0])
        query = f"MATCH {pattern} RETURN {select}"
        if rows[table]:
            conn.execute(f"COPY ({query}) TO '{out / table}.parquet'")
    return rows


def copy_graph(parquet: Path, rows: dict[str, int], target: Path) -> dict[str, Any]:
    """Timed: a fresh graph with agrag's schema, then ``COPY <table> FROM`` each exported table."""
    conn = kuzu.Connection(kuzu.Database(str(target)))
    for statement in SCHEMA:
        conn.execute(statement)
    seconds: dict[str, float] = {}
    for table in (*NODE_TABLES, *REL_TABLES):
        if rows[table]:
            started = time.perf_counter()
            conn.execute(f"COPY {table} FROM '{parquet / table}.parquet'")
            seconds[table] = time.perf_counter() - started
    total = sum(rows.values())
    return {
        "rows": total,
        "seconds": sum(seconds.values()),
        "rows_per_second": total / max(sum(seconds.values()), 1e-9),
        "seconds_by_table": seconds,
    }


def _open(vectors_dir: Path, collection: VectorCollection, dimension: int) -> QdrantEdgeVectorStore:
    return QdrantEdgeVectorStore(
        vectors_dir / collection.value, collection, dimension, keyword_fields=KEYWORD_FIELDS[collection]
    )


def copy_points(source_dir: Path, target_dir: Path, collection: VectorCollection, dimension: int) -> tuple[int, float]:
    """Every point of one collection's shard upserted into a new shard with agrag's settings, ``POINT_BATCH`` at a
    time; (points, seconds of the upserts alone). Each batch is read back from the source (untimed) just before it is
    written, so memory holds one batch: at 1,000,000 chunks the whole collection as Python objects would not fit.
    """
    source, target = _open(source_dir, collection, dimension), _open(target_dir, collection, dimension)
    reader, writer = source._shard, target._shard  # the floor reads and writes the engine directly
    points, seconds, offset = 0, 0.0, None
    while True:
        page, offset = reader.scroll(
            qe.ScrollRequest(offset=offset, limit=POINT_BATCH, with_payload=True, with_vector=True)
        )
        batch = [qe.Point(r.id, r.vector, r.payload) for r in page]
        started = time.perf_counter()
        if batch:
            writer.update(qe.UpdateOperation.upsert_points(batch))
        seconds += time.perf_counter() - started
        points += len(batch)
        if offset is None:
            break
    source.close()
    target.close()
    return points, seconds


def bare_writes(data_dir: Path, scratch: Path, dimension: int) -> dict[str, Any]:
    """The write floor of the ingested ``data_dir`` (see the module docstring), using ``scratch`` for the copies."""
    if scratch.exists():
        shutil.rmtree(scratch)
    rows = export_graph(data_dir / "graph.kuzu", scratch / "parquet")
    kuzu_floor = copy_graph(scratch / "parquet", rows, scratch / "graph.kuzu")
    qdrant: dict[str, Any] = {"points": 0, "seconds": 0.0}
    for collection in VectorCollection:
        points, seconds = copy_points(data_dir / "vectors", scratch / "vectors", collection, dimension)
        qdrant["points"] += points
        qdrant["seconds"] += seconds
    qdrant["points_per_second"] = qdrant["points"] / max(qdrant["seconds"], 1e-9)
    shutil.rmtree(scratch)
    return {
        "kuzu": kuzu_floor | {"rows_by_table": rows},
        "qdrant": qdrant,
        "seconds": kuzu_floor["seconds"] + qdrant["seconds"],
    }
