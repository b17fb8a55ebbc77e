"""Benchmark: ingestion throughput with the embed stage in-process and on 1 and 2 local Dask workers.

One synthetic Markdown corpus (``bench_ingest_search.build_corpus``, 4,000 chunks by default) is ingested into a
fresh data dir three times through the real Prefect flow: with the default runner (``ingest.parallel.workers=0``),
then with ``ingest.parallel.workers=1`` and ``=2`` (``min_chunks=0``, so the cluster starts for any size). The floor
is bare MiniLM encoding of exactly the chunk texts ingestion embeds, in this process with every core: the embedding
work no runner can avoid. Each run's embed stage and whole ingestion are reported in chunks per second and as ratios
to the in-process run and to the floor; the store counts of every run must be equal, or the benchmark stops.

A local cluster's start-up (spawning the workers, importing torch and loading the model in each) is part of its
embed stage: that is what a user waits for. Results go to ``bench/results/parallel_ingest.json``.

Run it with ``make bench-parallel`` or ``.venv/bin/python bench/parallel_ingest.py [--chunks N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agrag.service.runtime_env import apply_offline_defaults

apply_offline_defaults()

from bench_ingest_search import build_corpus  # noqa: E402 - the same corpus as `make bench`

RESULTS = Path(__file__).resolve().parent / "results" / "parallel_ingest.json"
RUNNERS = {"in-process": 0, "1 Dask worker": 1, "2 Dask workers": 2}


def floor(folder: Path) -> dict[str, Any]:
    """Bare encoding of the chunk texts ingestion embeds, in this process."""
    from agrag.components.embedders.embedding_texts import chunk_embedding_text
    from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
    from agrag.components.loaders.folder_loader import FolderLoader
    from agrag.pipelines.config_loader import load_config
    from agrag.pipelines.ingest_components import chunker_for

    docs = FolderLoader().run(root=str(folder))["documents"]
    chunks = chunker_for(load_config([]).ingest.chunker).run(documents=docs)["chunks"]
    texts = [chunk_embedding_text(c) for c in chunks if c.searchable]
    embedder = SentenceTransformersTextEmbedder()
    embedder.warm_up()
    started = time.perf_counter()
    embedder.embed_batch(texts)
    seconds = time.perf_counter() - started
    return {"texts": len(texts), "seconds": round(seconds, 2), "chunks_per_second": round(len(texts) / seconds, 1)}


def ingest(folder: Path, data_dir: Path, workers: int) -> dict[str, Any]:
    """One ingestion of ``folder`` into a new ``data_dir`` with ``workers`` local Dask workers (0: in-process)."""
    from agrag.flows.ingest_flow import run_ingest

    overrides = [f"ingest.parallel.workers={workers}", "ingest.parallel.min_chunks=0"]
    started = time.perf_counter()
    report = run_ingest(str(folder), overrides, data_dir=str(data_dir))
    wall = time.perf_counter() - started
    searchable = report.chunks_written - report.chunks_by_kind.get("section", 0)
    embed = report.stage_seconds["embed"]
    return {
        "embedded_on": report.embedded_on or "this process",
        "stage_seconds": {k: round(v, 2) for k, v in report.stage_seconds.items()},
        "embed_seconds": round(embed, 2),
        "seconds": round(report.seconds, 2),
        "wall_seconds": round(wall, 2),
        "embed_chunks_per_second": round(searchable / embed, 1),
        "chunks_per_second": round(searchable / report.seconds, 1),
        "counts": report.counts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=4000, help="Chunks in the synthetic corpus.")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agrag-bench-parallel-") as tmp:
        os.environ["PREFECT_HOME"] = str(Path(tmp) / "prefect")
        folder = Path(tmp) / "corpus"
        files = build_corpus(folder, args.chunks, random.Random(7))
        print(f"corpus: {args.chunks} chunks in {files} files", flush=True)
        base = floor(folder)
        print(f"floor: bare encoding of {base['texts']} chunks: {base['seconds']} s", flush=True)
        runs: dict[str, dict[str, Any]] = {}
        for name, workers in RUNNERS.items():
            runs[name] = ingest(folder, Path(tmp) / f"data-{workers}", workers)
            print(f"{name}: embed {runs[name]['embed_seconds']} s, ingest {runs[name]['seconds']} s", flush=True)
    counts = {name: run["counts"] for name, run in runs.items()}
    if len({json.dumps(c, sort_keys=True) for c in counts.values()}) != 1:
        raise SystemExit(f"The runners stored different things: {counts}")
    reference = runs["in-process"]
    for run in runs.values():
        run["embed_vs_in_process"] = round(reference["embed_seconds"] / run["embed_seconds"], 2)
        run["ingest_vs_in_process"] = round(reference["seconds"] / run["seconds"], 2)
        run["embed_vs_floor"] = round(run["embed_seconds"] / base["seconds"], 2)
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "chunks": args.chunks,
        "floor": base,
        "runs": runs,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\n{'runner':<16} {'embed s':>8} {'chunks/s':>9} {'x in-proc':>9} {'x floor':>8} {'ingest s':>9}")
    for name, run in runs.items():
        print(
            f"{name:<16} {run['embed_seconds']:>8} {run['embed_chunks_per_second']:>9} "
            f"{run['embed_vs_in_process']:>9} {run['embed_vs_floor']:>8} {run['seconds']:>9}"
        )
    print(f"floor            {base['seconds']:>8} {base['chunks_per_second']:>9}\nwritten to {args.output}")


if __name__ == "__main__":
    main()
