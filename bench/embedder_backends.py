"""Benchmark: the embedding backends side by side (embedder.backend torch, onnx, onnx_int8), bulk and per query.

Bulk: the chunk texts of the `make bench` synthetic corpus (1,000 chunks by default) embedded in batches of 64, as
ingestion does. Query: one short question at a time, as a search does (the largest part of every query floor).
Each backend embeds the same texts; the ONNX exports are made beforehand (their one-time cost is reported apart, as
``load_seconds``), and each ONNX backend's vectors are compared with torch's (mean and lowest cosine over the bulk
texts). Results go to ``bench/results/embedder_backends.json``.

Run it with ``.venv/bin/python bench/embedder_backends.py [--chunks N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from agrag.service.runtime_env import apply_offline_defaults

apply_offline_defaults()

from bench_ingest_search import make_queries, paragraph  # noqa: E402 - the same texts as `make bench`

RESULTS = Path(__file__).resolve().parent / "results" / "embedder_backends.json"
BACKENDS = ("torch", "onnx", "onnx_int8")


def main() -> None:
    from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    texts = [paragraph(rng) for _ in range(args.chunks)]
    queries = make_queries(rng, args.queries)
    result: dict[str, object] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "chunks": args.chunks,
        "queries": args.queries,
        "load_average_before": os.getloadavg()[0],  # other work on the machine skews every figure: check it
    }
    vectors = {}
    with tempfile.TemporaryDirectory(prefix="agrag-onnx-") as onnx_dir:
        for backend in BACKENDS:
            embedder = SentenceTransformersTextEmbedder(backend=backend, onnx_dir=onnx_dir)
            started = time.perf_counter()
            embedder.warm_up()
            load = time.perf_counter() - started
            embedder.embed_batch(texts[:64])
            started = time.perf_counter()
            vectors[backend] = np.array(embedder.embed_batch(texts))
            bulk = time.perf_counter() - started
            times = []
            for query in queries:
                started = time.perf_counter()
                embedder.embed_batch([query])
                times.append((time.perf_counter() - started) * 1000)
            result[backend] = {
                "load_seconds": round(load, 2),
                "bulk_seconds": round(bulk, 2),
                "chunks_per_second": round(len(texts) / bulk, 1),
                "query_p50_ms": round(statistics.median(times), 2),
                "query_p95_ms": round(sorted(times)[int(len(times) * 0.95)], 2),
            }
            print(backend, result[backend], flush=True)
    torch_run = result["torch"]
    assert isinstance(torch_run, dict)
    for backend in BACKENDS[1:]:
        run = result[backend]
        assert isinstance(run, dict)
        cosines = (vectors["torch"] * vectors[backend]).sum(axis=1)
        result[f"{backend}_vs_torch"] = {
            "bulk_speedup": round(torch_run["bulk_seconds"] / run["bulk_seconds"], 2),
            "query_p50_speedup": round(torch_run["query_p50_ms"] / run["query_p50_ms"], 2),
            "mean_cosine": float(cosines.mean()),
            "lowest_cosine": float(cosines.min()),
        }
        print(f"{backend} vs torch", result[f"{backend}_vs_torch"])
    result["load_average_after"] = os.getloadavg()[0]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
