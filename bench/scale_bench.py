"""Benchmark: how agrag's ingestion and search cost grow with the corpus, from 10,000 to 1,000,000 chunks.

For each size, on a synthetic corpus with Zipf-distributed names (``scale_corpus.py``), in fresh folders:

* Ingest: the real Prefect flow ``ingest_flow`` with ``embedder=hashed`` (unit vectors hashed from the words: the
  run measures agrag and its stores, not MiniLM), in a process of its own. Reported: seconds and chunks/s of every
  stage, the peak RSS of the process, and the disk size of the graph and the vectors. From
  ``--finalize-apart-from`` chunks (500,000) the ingestion runs with ``ingest.finalize=manual`` and the communities
  and reports are made by ``agrag finalize``'s flow in a process of its own, as on a machine this size one should.
* Write floor: the rows the ingestion stored, written again with the engines' bulk paths (Kùzu ``COPY FROM`` and
  Qdrant Edge batch upserts; ``scale_floors.py``). The write stage is reported next to it, with the stores' rates.
* Serve: a process that opens the data dir as ``agrag serve`` does, times the first query of every recipe (pipeline
  build and the ppr graph snapshot included), runs warm-up queries, reads its peak RSS (what serving needs), then
  times every recipe and ``discover`` next to its floor exactly as ``make bench`` does (``recipe_latency.py``,
  ``evidence_latency.py``). The query embedding is the hashed one (microseconds), so the latencies are agrag's and
  the stores', without MiniLM's 2 to 7 ms per query.

The growth of each latency and of the peak RSS is fitted as a log-log slope over the sizes (1.0: linear in the
corpus; 0: flat). Results go to ``bench/results/bench_scale.json`` and a plot to ``bench/results/bench_scale.png``.

Run it with ``make bench-scale`` (10,000 and 100,000 chunks) or
``.venv/bin/python bench/scale_bench.py --sizes 10000,100000,1000000`` (``--million`` is short for that). The
1,000,000-chunk size alone, kept beside the smaller ones already in the JSON:
``make bench-scale SCALE_ARGS="--sizes 1000000 --merge --floor-queries 10"`` (about two hours here).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agrag.components.data_models.query_analysis import QueryAnalyzerKind

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "bench" / "results"
OVERRIDES = ["embedder=hashed"]
DIMENSION = 384
WARM_UP_QUERIES = 20


def peak_rss_mib() -> float:
    """The peak resident memory of this process so far (VmHWM), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def disk_mib(path: Path) -> float:
    """The bytes of the files under ``path``, in MiB."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 2**20


def phase_ingest(corpus: Path, *, finalize_apart: bool = False) -> dict[str, Any]:
    """The real ingestion flow over ``corpus`` (in this process; AGRAG_DATA_DIR names the data dir).

    ``finalize_apart``: with ``ingest.finalize=manual``, leaving communities and reports to ``phase_finalize``.
    """
    from agrag.flows.ingest_flow import ingest_flow
    from agrag.flows.progress import stage_lines
    from agrag.service.server.private_prefect import private_prefect_api

    started = time.perf_counter()
    # a line per stage on stderr (a 1,000,000-chunk ingestion runs for over an hour), and the CLI's private Prefect
    # server, which dies with this process: Prefect's own temporary server outlived the kernel's kill of a 1M attempt
    with private_prefect_api(), stage_lines(sys.stderr):
        overrides = [*OVERRIDES, "ingest.finalize=manual"] if finalize_apart else OVERRIDES
        report = ingest_flow(str(corpus), overrides, progress_bar=False)
    wall = time.perf_counter() - started
    chunks = report.chunks_written
    return {
        "chunks": chunks,
        "documents": report.documents_ingested,
        "entities": report.entities_found,
        "relations": report.relations_found,
        "merges": report.merges,
        "communities_by_level": report.communities_by_level,
        "counts": report.counts,
        "stage_seconds": {k: round(v, 3) for k, v in report.stage_seconds.items()},
        "stage_chunks_per_second": {k: chunks / v for k, v in report.stage_seconds.items() if v > 0},
        "seconds": report.seconds,
        "wall_seconds": wall,
        "chunks_per_second": chunks / report.seconds,
        "peak_rss_mib": peak_rss_mib(),
    }


def phase_finalize() -> dict[str, Any]:
    """``agrag finalize``'s flow on the ingested data dir (in this process): communities and reports."""
    from agrag.flows.finalize_run import run_finalize
    from agrag.flows.progress import stage_lines
    from agrag.service.server.private_prefect import private_prefect_api

    started = time.perf_counter()
    with private_prefect_api(), stage_lines(sys.stderr):
        report = run_finalize(OVERRIDES)
    return {
        "stage_seconds": {k: round(v, 3) for k, v in (report.stage_seconds or {}).items()},
        "communities_by_level": report.communities_by_level,
        "wall_seconds": time.perf_counter() - started,
        "peak_rss_mib": peak_rss_mib(),
    }


def phase_floor(data_dir: Path, scratch: Path) -> dict[str, Any]:
    """The bare write floor of the ingested data dir (see ``scale_floors.py``)."""
    import scale_floors  # type: ignore[import-not-found]

    return dict(scale_floors.bare_writes(data_dir, scratch, DIMENSION))


def phase_serve(work: Path, queries: int, floor_queries: int | None) -> dict[str, Any]:
    """Open the data dir, time first queries, read the serving peak RSS, then every recipe and discover vs floors."""
    import evidence_latency  # type: ignore[import-not-found]
    import recipe_latency  # type: ignore[import-not-found]
    import scale_corpus  # type: ignore[import-not-found]

    from agrag.components.llm.openai_chat_client import OpenAIChatClient
    from agrag.pipelines.evidence_session import EvidenceSession
    from agrag.pipelines.recipes import load_recipe
    from agrag.pipelines.runtime import open_runtime
    from agrag.pipelines.search_engine import SearchEngine
    from agrag.pipelines.settings import Settings, load_settings
    from tests.support.scripted_llm import scripted_llm
    from tests.support.tiny_cross_encoder import make_tiny_cross_encoder

    cross_encoder = make_tiny_cross_encoder(work / "tiny-cross-encoder")
    settings = load_settings()
    # the scripted LLM answers text2cypher only: queries are analysed by the rules, as an offline user's are
    retrieval = settings.retrieval.model_copy(
        update={"cross_encoder_model": cross_encoder, "query_analyzer": QueryAnalyzerKind.RULES}
    )
    rss_before_open = peak_rss_mib()
    started = time.perf_counter()
    runtime = open_runtime(OVERRIDES, Settings(settings.agrag, retrieval))
    runtime.serve_long()  # as agrag serve does
    out: dict[str, Any] = {"open_seconds": time.perf_counter() - started}
    warm_up = scale_corpus.queries(WARM_UP_QUERIES, seed=11)
    timed = scale_corpus.queries(queries, seed=13)
    try:
        store, embedder = runtime.store, runtime.embedder
        with scripted_llm(lambda messages: recipe_latency.SCRIPTED_ANSWER) as llm:
            client = OpenAIChatClient(llm.base_url, "scripted", timeout_seconds=30, max_retries=0)
            engine = SearchEngine(store, embedder, retrieval, llm=client)
            first: dict[str, float] = {}
            for name in recipe_latency.RECIPES:
                clock = time.perf_counter()
                engine.search_sync(warm_up[0], load_recipe(name))
                first[name] = (time.perf_counter() - clock) * 1000
            session = EvidenceSession(store, embedder)
            clock = time.perf_counter()
            session.discover(warm_up[0], limit=10)
            first["discover"] = (time.perf_counter() - clock) * 1000
            for query in warm_up:
                for name in recipe_latency.RECIPES:
                    engine.search_sync(query, load_recipe(name))
                session.discover(query, limit=10)
            out["first_query_ms"] = first
            out["serving_peak_rss_mib"] = peak_rss_mib()
            out["rss_before_open_mib"] = rss_before_open
            del engine, session
            out |= recipe_latency.bench_recipes(
                store,
                embedder,
                settings=retrieval,
                llm=client,
                llm_url=llm.base_url,
                cross_encoder_dir=cross_encoder,
                warm_up=warm_up[:5],
                queries=timed,
                floor_queries=floor_queries,
            )
        out["evidence"] = evidence_latency.bench_evidence(store, embedder, warm_up=warm_up[:5], queries=timed)
        out["store_counts"] = store.counts()
    finally:
        runtime.close()
    out["queries"] = len(timed)
    out["floor_queries"] = len(timed) if floor_queries is None else min(floor_queries, len(timed))
    return out


def run_phase(phase: str, env: dict[str, str], *args: str) -> dict[str, Any]:
    """Run one phase in a process of its own (its peak RSS is its own); return what it printed as JSON."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    command = [sys.executable, __file__, "--phase", phase, "--phase-output", str(out), *args]
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True)
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    result["process_seconds"] = time.perf_counter() - started
    return result


def buffer_pool_mb(chunks: int) -> int:
    """The Kùzu buffer pool (``AGRAG_KUZU_BUFFER_POOL_MB``) of the ingestion and of the serving process.

    The default, 1,024 MB, holds a bulk first load up to a few hundred thousand chunks; the one-transaction load
    of 1,000,000 needs more, as the README's settings table says: its relation copy needs about 1.2 KB of pool a
    relation (measured by copying the 100,000-chunk graph with smaller pools), and the pool keeps what it filled
    for the rest of the run, so it is sized to the load, not more (6,524 MB at 1,000,000 chunks). The serving
    process gets as much: at 300,000 chunks the bare GRAPH_EXPAND floor, which reads every relation of a hub per
    hop, filled 1,024 MB and failed. A set ``AGRAG_KUZU_BUFFER_POOL_MB`` wins.
    """
    return 1024 + chunks * 11 // 2000


def bench_size(
    chunks: int, root: Path, queries: int, floor_queries: int | None, finalize_apart_from: int
) -> dict[str, Any]:
    """Every phase for one corpus size, in folders under ``root`` (removed afterwards).

    From ``finalize_apart_from`` chunks the communities and reports are made by ``agrag finalize``'s flow in a
    process of its own after the ingestion (``ingest.finalize=manual``), as a user of a machine this size would:
    at 1,000,000 chunks the ingesting process still holds the bulk load's Kùzu pages and Qdrant's write buffers
    when the reports stage begins. Their stage times join the ingestion's, and the peak is the larger process's.
    """
    import scale_corpus  # type: ignore[import-not-found]

    corpus, data = root / "corpus", root / "data"
    env = os.environ | {"AGRAG_DATA_DIR": str(data), "PREFECT_HOME": str(root / "prefect")}
    pooled_env = {"AGRAG_KUZU_BUFFER_POOL_MB": str(buffer_pool_mb(chunks))} | env  # the ingestion's and the server's
    started = time.perf_counter()
    files = scale_corpus.write_corpus(corpus, chunks)
    print(f"[{chunks:,} chunks] corpus: {files:,} files in {time.perf_counter() - started:.0f} s", flush=True)
    apart = chunks >= finalize_apart_from
    ingest = run_phase("ingest", pooled_env, "--corpus", str(corpus), *(["--finalize-apart"] if apart else []))
    ingest["kuzu_buffer_pool_mb"] = int(pooled_env["AGRAG_KUZU_BUFFER_POOL_MB"])
    if apart:
        finalize = run_phase("finalize", pooled_env)
        ingest["finalize_apart"] = finalize
        # Both have an index stage (the ingestion's indexes its vectors, finalize's the reports'): the times add up.
        for stage, seconds in finalize["stage_seconds"].items():
            ingest["stage_seconds"][stage] = ingest["stage_seconds"].get(stage, 0.0) + seconds
        ingest["seconds"] += sum(finalize["stage_seconds"].values())
        ingest["chunks_per_second"] = ingest["chunks"] / ingest["seconds"]
        ingest["stage_chunks_per_second"] = {k: chunks / v for k, v in ingest["stage_seconds"].items() if v > 0}
        ingest["peak_rss_mib"] = max(ingest["peak_rss_mib"], finalize["peak_rss_mib"])
    ingest["disk_mib"] = {
        "graph": disk_mib(data / "graph.kuzu"),
        "vectors": disk_mib(data / "vectors"),
        "data_dir": disk_mib(data),
    }
    print(f"[{chunks:,} chunks] ingest: {ingest['seconds']:.0f} s, stages {ingest['stage_seconds']}", flush=True)
    floor = run_phase("floor", env, "--scratch", str(root / "floor"))
    write = ingest["stage_seconds"].get("write", 0.0)
    floor["write_stage_ratio"] = write / floor["seconds"]
    print(f"[{chunks:,} chunks] write stage {write:.1f} s vs bare writes {floor['seconds']:.1f} s", flush=True)
    shard = ["--floor-queries", str(floor_queries)] if floor_queries is not None else []
    serve = run_phase("serve", pooled_env, "--work", str(root), "--queries", str(queries), *shard)
    serve["kuzu_buffer_pool_mb"] = int(pooled_env["AGRAG_KUZU_BUFFER_POOL_MB"])
    print(f"[{chunks:,} chunks] serve: peak RSS {serve['serving_peak_rss_mib']:.0f} MiB", flush=True)
    return {"chunks": chunks, "files": files, "ingest": ingest, "write_floor": floor, "serve": serve}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="corpus sizes in chunks, comma-separated")
    parser.add_argument("--million", action="store_true", help="sizes 10,000, 100,000 and 1,000,000")
    parser.add_argument("--queries", type=int, default=100, help="timed queries per recipe and size")
    parser.add_argument(
        "--floor-queries",
        type=int,
        default=None,
        help="measure the floors on this many timed queries only (default: all; 10 is enough at 1,000,000 chunks)",
    )
    parser.add_argument("--output", type=Path, default=RESULTS / "bench_scale.json", help="the JSON written")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the sizes of the existing --output that this run does not measure (run 1,000,000 alone)",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="where the corpora and data dirs go (a temp dir)")
    parser.add_argument(
        "--finalize-apart-from",
        type=int,
        default=500_000,
        help="from this many chunks, make communities and reports in a process of their own (agrag finalize)",
    )
    parser.add_argument("--phase", choices=["ingest", "finalize", "floor", "serve"], help=argparse.SUPPRESS)
    parser.add_argument("--finalize-apart", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--phase-output", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--scratch", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # the bench modules next to this script
    sys.path.append(str(REPO_ROOT))  # tests/support (the tiny cross-encoder, the scripted LLM); after the rest
    from agrag.service.runtime_env import apply_offline_defaults

    apply_offline_defaults()
    if args.phase:
        run_one_phase(args)
        return
    import scale_report  # type: ignore[import-not-found]

    sizes = [10_000, 100_000, 1_000_000] if args.million else [int(s) for s in args.sizes.split(",")]
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    result: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu_cores": os.cpu_count(),
        "platform": platform.platform(terse=True),
        "python": platform.python_version(),
        "embedder": "hashed-384 (embedding excluded: microseconds per text)",
        "sizes": [],
    }
    earlier = _earlier_sizes(args.output) if args.merge else []
    measured: list[dict[str, Any]] = []
    for chunks in sizes:
        with tempfile.TemporaryDirectory(prefix=f"agrag-scale-{chunks}-", dir=args.workdir) as tmp:
            size = bench_size(chunks, Path(tmp), args.queries, args.floor_queries, args.finalize_apart_from)
        measured.append(size | {"run_date": result["date"]})
        done = {size["chunks"] for size in measured}
        kept = [size for size in earlier if size["chunks"] not in done]
        result["sizes"] = sorted([*kept, *measured], key=lambda size: int(size["chunks"]))
        result["growth"] = scale_report.growth(result["sizes"])
        result["script_wall_seconds"] = time.perf_counter() - started
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    scale_report.print_tables(result)
    plot = args.output.with_suffix(".png")
    scale_report.plot(result, plot)
    print(f"\nJSON written to {args.output}, plot to {plot}")


def run_one_phase(args: argparse.Namespace) -> None:
    """One phase in this process (``run_phase`` started it), its result written to ``--phase-output``."""
    data_dir = Path(os.environ["AGRAG_DATA_DIR"])
    if args.phase == "ingest":
        result = phase_ingest(args.corpus, finalize_apart=args.finalize_apart)
    elif args.phase == "finalize":
        result = phase_finalize()
    elif args.phase == "floor":
        result = phase_floor(data_dir, args.scratch)
    else:
        result = phase_serve(args.work, args.queries, args.floor_queries)
    args.phase_output.write_text(json.dumps(result, default=str), encoding="utf-8")


def _earlier_sizes(output: Path) -> list[dict[str, Any]]:
    """The sizes an earlier run wrote to ``output``, each marked with that run's date (kept until measured again)."""
    if not output.exists():
        return []
    earlier = json.loads(output.read_text(encoding="utf-8"))
    return [size | {"run_date": size.get("run_date", earlier["date"])} for size in earlier.get("sizes", [])]


if __name__ == "__main__":
    main()
