"""Benchmark: ingestion throughput and HYBRID and MULTI_HOP query latency, each next to the floor it cannot beat.

What it measures, in one run on a synthetic Markdown corpus (10,000 chunks by default):

* Ingest: the real Prefect flow ``ingest_flow``, timed by its own stage clock (load ... write, without Prefect's
  server start-up) and by the wall clock around the call. Floor: bare MiniLM encoding of exactly the chunk texts
  that ingestion embeds. The ratio says how much agrag adds on top of the unavoidable embedding work.
* Query: ``SearchEngine.search_sync`` with the default HYBRID recipe (entity + chunk, limit 10), end to end,
  including the query embedding. Floors: a bare dense Qdrant Edge query on the same chunk shard with the embedding
  precomputed, and a bare embedding of one query. The MULTI_HOP recipe (the ``ppr`` graph walk) is timed on the same
  queries against the same floors, and its first query separately, since it reads the graph snapshot from Kùzu.

Everything is written to a temporary folder (corpus, data dir, Prefect home); the numbers are printed as a table and
saved as JSON to ``bench/results/bench_ingest_search.json``.

Run it with ``make bench`` or ``.venv/bin/python bench/bench_ingest_search.py [--chunks N] [--queries Q]``.
With the defaults it takes about 8 minutes on 2 CPU cores, most of it MiniLM encoding (twice: ingest and floor).
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
from typing import Any

for _name, _value in {
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
}.items():
    os.environ.setdefault(_name, _value)

SECTIONS_PER_FILE = 20
WARM_UP_QUERIES = 5
RESULTS_FILE = Path(__file__).resolve().parent / "results" / "bench_ingest_search.json"

FIRST = "Maria Tomas Daniel Priya Lena Omar Sofia Kenji Amara Lucas Ingrid Rafael Chloe Viktor Nadia Hugo".split()
LAST = "Chen Eriksen Okafor Nair Novak Haddad Rossi Tanaka Mensah Silva Berg Ortega Dubois Petrov Kaur Lind".split()
BRANDS = "Orion Vega Atlas Beacon Nova Helix Zephyr Quasar Titan Aurora Polaris Kestrel Cobalt Juniper".split()
PARTS = "Planner Perception Controller Telemetry Scheduler Gateway Mapper Dispatcher Monitor Bridge".split()
ACRONYMS = "SLAM ROS CAN PID MTBF LIDAR IMU EKF AGV WMS OTA API SLA RTK GPU".split()
SITES = "Lyon Rotterdam Osaka Denver Lisbon Gdansk Austin Porto".split()
WORDS = (
    "the robot fleet route aisle segment map obstacle sensor wheel speed battery charge dock queue task order "
    "shelf pallet picker latency throughput firmware update rollout alert dashboard metric replan traffic lane "
    "camera frame filter threshold timeout retry release test field warehouse shift night load error fault "
    "recovery handover config limit budget owner review design plan check safety stop zone grid path cost"
).split()
VERBS = "owns maintains reviewed rewrote tuned tested deployed debugged documented replaced monitors".split()


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def component(rng: random.Random) -> str:
    return f"{rng.choice(BRANDS)} {rng.choice(PARTS)}"


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n))


def sentence(rng: random.Random) -> str:
    kind = rng.randrange(4)
    if kind == 0:
        return f"{person(rng)} {rng.choice(VERBS)} the {component(rng)} for {words(rng, 3)} in {rng.choice(SITES)}."
    if kind == 1:
        return f"The {component(rng)} uses {rng.choice(ACRONYMS)} to {words(rng, 5)} and {words(rng, 3)}."
    if kind == 2:
        return f"After the {words(rng, 2)} at {rng.choice(SITES)}, {person(rng)} asked for {words(rng, 6)}."
    return f"{rng.choice(ACRONYMS)} {words(rng, 4)} with {words(rng, 4)} while the {words(rng, 3)} {words(rng, 2)}."


def paragraph(rng: random.Random) -> str:
    target, parts, size = rng.randint(300, 500), [], 0
    while size < target:
        parts.append(sentence(rng))
        size += len(parts[-1]) + 1
    return " ".join(parts)


def build_corpus(folder: Path, chunks: int, rng: random.Random) -> int:
    """Write Markdown files of SECTIONS_PER_FILE sections each, one chunk per section; return the file count."""
    folder.mkdir(parents=True)
    files = -(-chunks // SECTIONS_PER_FILE)
    for f in range(files):
        sections = min(SECTIONS_PER_FILE, chunks - f * SECTIONS_PER_FILE)
        lines = [f"# {component(rng)} notes {f}\n"]
        for s in range(sections):
            lines.append(f"## {rng.choice(SITES)} {words(rng, 2)} {s}\n\n{paragraph(rng)}\n")
        (folder / f"notes_{f:05d}.md").write_text("\n".join(lines), encoding="utf-8")
    return files


def make_queries(rng: random.Random, n: int) -> list[str]:
    templates = [
        lambda: f"Who owns the {component(rng)}?",
        lambda: f"what does {rng.choice(ACRONYMS)} do in {words(rng, 2)}",
        lambda: f"Which {component(rng)} changes did {person(rng)} make in {rng.choice(SITES)}?",
        lambda: f"{rng.choice(ACRONYMS)} {words(rng, 3)}",
        lambda: f"Why did the {words(rng, 2)} fail at {rng.choice(SITES)}?",
    ]
    return [rng.choice(templates)() for _ in range(n)]


def pct(samples: list[float]) -> dict[str, float]:
    """p50 and p95 in milliseconds."""
    ms = sorted(s * 1000 for s in samples)
    p95 = statistics.quantiles(ms, n=100, method="inclusive")[94] if len(ms) > 1 else ms[0]
    return {"p50_ms": statistics.median(ms), "p95_ms": p95}


def bench_ingest(folder: Path) -> dict[str, Any]:
    from agrag.flows.ingest_flow import ingest_flow

    started = time.perf_counter()
    report = ingest_flow(str(folder), [], progress_bar=False)
    wall = time.perf_counter() - started
    fields = (
        "documents_seen documents_ingested chunks_written chunks_by_kind entities_found entities_new relations_found "
        "merges kept_apart candidates communities_by_level reports_by_method counts"
    )
    searchable = report.chunks_written - report.chunks_by_kind.get("section", 0)
    return {name: getattr(report, name) for name in fields.split()} | {
        "stage_seconds": {k: round(v, 3) for k, v in report.stage_seconds.items()},
        "seconds": report.seconds,
        "wall_seconds": wall,
        "chunks_searchable": searchable,
        "chunks_per_second": searchable / report.seconds,
    }


def bench_ingest_floor(folder: Path) -> dict[str, Any]:
    from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
    from agrag.components.loaders.folder_loader import FolderLoader
    from agrag.flows.ingest_tasks import chunk_embedding_text
    from agrag.pipelines.config_loader import load_config
    from agrag.pipelines.ingest_components import chunker_for

    docs = FolderLoader().run(root=str(folder))["documents"]
    chunks = chunker_for(load_config([]).ingest.chunker).run(documents=docs)["chunks"]
    texts = [chunk_embedding_text(c) for c in chunks if c.searchable]
    embedder = SentenceTransformersTextEmbedder(batch_size=64)
    embedder.warm_up()
    started = time.perf_counter()
    embedder.embed_batch(texts)
    seconds = time.perf_counter() - started
    return {"texts": len(texts), "seconds": seconds, "texts_per_second": len(texts) / seconds}


def bench_queries(queries: list[str]) -> dict[str, Any]:
    import qdrant_edge as qe

    from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
    from agrag.pipelines.config_loader import load_config
    from agrag.pipelines.search_engine import SearchEngine
    from agrag.pipelines.settings import load_agrag_settings, load_retrieval_settings
    from agrag.pipelines.store_factory import open_knowledge_store

    config = load_config([])
    retrieval = load_retrieval_settings()
    embedder = SentenceTransformersTextEmbedder(config.embedder.model, config.embedder.device)
    embedder.warm_up()
    store = open_knowledge_store(load_agrag_settings(), config.vector_store, embedder, retrieval)
    try:
        engine = SearchEngine(store, embedder, retrieval)
        hybrid, embed, edge, returned, failed = [], [], [], 0, 0
        methods: dict[str, list[float]] = {m.value: [] for m in config.recipe.methods}
        for i, query in enumerate(make_queries(random.Random(11), WARM_UP_QUERIES) + queries):
            started = time.perf_counter()
            response = engine.search_sync(query, config.recipe)
            if i >= WARM_UP_QUERIES:
                hybrid.append(time.perf_counter() - started)
                returned += len(response.results)
                failed += sum(not m.ok for m in response.trace.methods)
                for m in response.trace.methods:
                    methods[m.method].append(m.elapsed_ms / 1000)
        multi_hop = load_config(["recipe=multi_hop"]).recipe
        started = time.perf_counter()
        engine.search_sync(queries[0], multi_hop)  # the first ppr query reads the graph snapshot from Kùzu
        snapshot_ms = (time.perf_counter() - started) * 1000
        walks = []
        for query in queries:
            started = time.perf_counter()
            engine.search_sync(query, multi_hop)
            walks.append(time.perf_counter() - started)
        shard = store.chunks._shard  # type: ignore[attr-defined]
        for i, query in enumerate(queries[:WARM_UP_QUERIES] + queries):
            started = time.perf_counter()
            vector = embedder.embed_batch([query])[0]
            embed_seconds = time.perf_counter() - started
            request = qe.QueryRequest(limit=10, query=qe.Query.Nearest(vector, using="dense"), with_payload=True)
            started = time.perf_counter()
            shard.query(request)
            if i >= WARM_UP_QUERIES:
                edge.append(time.perf_counter() - started)
                embed.append(embed_seconds)
    finally:
        store.close()
    out = {"queries": len(queries), "hybrid": pct(hybrid), "bare_edge": pct(edge), "bare_embed": pct(embed)}
    out |= {"multi_hop": pct(walks), "multi_hop_first_query_ms": snapshot_ms}
    h, e, m = out["hybrid"]["p50_ms"], out["bare_edge"]["p50_ms"], out["bare_embed"]["p50_ms"]
    out |= {"ratio_hybrid_vs_edge_plus_embed": h / (e + m), "ratio_hybrid_vs_edge": h / e}
    out |= {"ratio_multi_hop_vs_edge_plus_embed": out["multi_hop"]["p50_ms"] / (e + m)}
    out |= {"mean_results": returned / len(queries), "failed_methods": failed}
    out["method_p50_ms"] = {name: pct(samples)["p50_ms"] for name, samples in methods.items()}
    return out


def print_table(r: dict[str, Any]) -> None:
    ing, floor, q = r["ingest"], r["ingest_floor"], r["query"]
    rows = [
        ("date", r["date"]),
        ("machine", f"{r['cpu_cores']} cores, {r['platform']}, Python {r['python']}"),
        ("corpus", f"{r['files']} files, {ing['chunks_searchable']} searchable chunks ({ing['chunks_by_kind']})"),
        (
            "graph",
            f"{ing['entities_found']} entities, {ing['relations_found']} relations, {ing['merges']} merges, "
            f"communities {ing['communities_by_level']}",
        ),
        ("entities / relations", f"{ing['entities_found']} / {ing['relations_found']}"),
        ("ingest stages", f"{ing['seconds']:.1f} s  ({ing['chunks_per_second']:.1f} chunks/s)"),
        ("  per stage (s)", ", ".join(f"{k} {v:.1f}" for k, v in ing["stage_seconds"].items())),
        ("ingest wall (with Prefect)", f"{ing['wall_seconds']:.1f} s"),
        ("ingest floor (MiniLM only)", f"{floor['seconds']:.1f} s  ({floor['texts_per_second']:.1f} texts/s)"),
        ("ingest ratio stages/floor", f"{ing['seconds'] / floor['seconds']:.2f}x"),
    ]
    timed = (
        ("HYBRID end to end", "hybrid"),
        ("MULTI_HOP end to end", "multi_hop"),
        ("bare Edge query", "bare_edge"),
        ("bare embed", "bare_embed"),
    )
    for name, key in timed:
        rows.append((f"{name} p50 / p95", f"{q[key]['p50_ms']:.2f} / {q[key]['p95_ms']:.2f} ms"))
    per_method = ", ".join(f"{name} {ms:.2f} ms" for name, ms in q["method_p50_ms"].items())
    rows += [
        ("  HYBRID trace p50 by method", per_method),
        ("HYBRID p50 / (edge+embed)", f"{q['ratio_hybrid_vs_edge_plus_embed']:.2f}x"),
        ("HYBRID p50 / edge", f"{q['ratio_hybrid_vs_edge']:.1f}x"),
        ("MULTI_HOP p50 / (edge+embed)", f"{q['ratio_multi_hop_vs_edge_plus_embed']:.2f}x"),
        ("MULTI_HOP first query (graph snapshot)", f"{q['multi_hop_first_query_ms']:.0f} ms"),
        ("queries (failed methods)", f"{q['queries']} ({q['failed_methods']}), {q['mean_results']:.1f} results avg"),
        ("script wall", f"{r['script_wall_seconds']:.1f} s"),
    ]
    width = max(len(name) for name, _ in rows)
    print("agrag ingest + search benchmark")
    print("-" * (width + 40))
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000, help="chunks in the synthetic corpus")
    parser.add_argument("--queries", type=int, default=200, help="timed queries (after 5 warm-up queries)")
    args = parser.parse_args()
    script_started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agrag-bench-") as tmp:
        os.environ["PREFECT_HOME"] = str(Path(tmp) / "prefect")
        os.environ["AGRAG_DATA_DIR"] = str(Path(tmp) / "data")
        rng = random.Random(7)
        folder = Path(tmp) / "corpus"
        files = build_corpus(folder, args.chunks, rng)
        queries = make_queries(rng, args.queries)
        result: dict[str, Any] = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "cpu_cores": os.cpu_count(),
            "platform": platform.platform(terse=True),
            "python": platform.python_version(),
            "files": files,
            "ingest": bench_ingest(folder),
            "ingest_floor": bench_ingest_floor(folder),
            "query": bench_queries(queries),
        }
    result["ingest_ratio"] = result["ingest"]["seconds"] / result["ingest_floor"]["seconds"]
    result["script_wall_seconds"] = time.perf_counter() - script_started
    print_table(result)
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_FILE.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nJSON written to {RESULTS_FILE}")


if __name__ == "__main__":
    main()
