"""Benchmark: ingestion throughput and the query latency of every recipe, each next to the floor it cannot beat.

What it measures, in one run on a synthetic Markdown corpus (10,000 chunks by default):

* Ingest: the real Prefect flow ``ingest_flow``, timed by its own stage clock (load ... write, without Prefect's
  server start-up) and by the wall clock around the call. Floor: bare MiniLM encoding of exactly the chunk texts
  that ingestion embeds. The ratio says how much agrag adds on top of the unavoidable embedding work. The same
  encoding is timed again with the fast ONNX embedder (``--onnx-backend``, default ``onnx_int8``: what
  ``embedder=minilm_onnx_int8`` ingests with), side by side with torch's.
* Query: ``SearchEngine.search_sync`` with each shipped recipe (``conf/recipe/*.yaml``: entity, chunk, hybrid,
  hybrid_reranked, graph_expand, thematic, text2cypher, multi_hop), end to end, p50 and p95, including the query
  embedding. Each recipe's floor is one bare query embedding plus the bare store queries its methods and steps need
  (see ``recipe_latency.py``). HYBRID_RERANKED re-ranks with a tiny cross-encoder generated on the spot, and
  TEXT2CYPHER asks a scripted local LLM stub (always the same count query): those two rows measure our overhead,
  not a real model's cost. The first query of each recipe (pipeline build, model load, graph snapshot) is reported
  apart. The bare query embedding is timed again with the ONNX embedder, next to torch's: the query floor it would
  give.
* Evidence: ``EvidenceSession.discover`` (hybrid, limit 10) on the same queries, over every document and within a
  scope of 50 documents, each next to its floor: one bare query embedding plus the two bare single-leg shard
  requests it sends (see ``evidence_latency.py``).

Everything is written to a temporary folder (corpus, data dir, Prefect home, the tiny cross-encoder); the numbers are
printed as tables and saved as JSON to ``bench/results/bench_ingest_search.json``.

Run it with ``make bench`` or ``.venv/bin/python bench/bench_ingest_search.py [--chunks N] [--queries Q]``
(``--skip-ingest-floor`` and ``--output`` for quick runs while developing). With the defaults it takes about 10
minutes on 2 CPU cores, most of it MiniLM encoding (with torch twice: ingest and floor; then the ONNX floor, about a
minute).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agrag.service.runtime_env import apply_offline_defaults

apply_offline_defaults()  # before Haystack, Prefect or transformers are imported

SECTIONS_PER_FILE = 20
# The fast embedder whose floors are shown next to torch's (embedder=minilm_onnx_int8); --onnx-backend onnx for the
# exact ONNX export.
ONNX_BACKENDS = ("onnx_int8", "onnx")
WARM_UP_QUERIES = 5
REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_FILE = REPO_ROOT / "bench" / "results" / "bench_ingest_search.json"

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


def bench_ingest_floor(folder: Path, backend: str = "torch", onnx_dir: Path | None = None) -> dict[str, Any]:
    """Bare encoding of the chunk texts ingestion embeds, with ``backend`` (its one-time load or export apart)."""
    from agrag.components.embedders.embedding_texts import chunk_embedding_text
    from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
    from agrag.components.loaders.folder_loader import FolderLoader
    from agrag.pipelines.config_loader import load_config
    from agrag.pipelines.ingest_components import chunker_for

    docs = FolderLoader().run(root=str(folder))["documents"]
    chunks = chunker_for(load_config([]).ingest.chunker).run(documents=docs)["chunks"]
    texts = [chunk_embedding_text(c) for c in chunks if c.searchable]
    embedder = SentenceTransformersTextEmbedder(batch_size=64, backend=backend, onnx_dir=_text(onnx_dir))
    started = time.perf_counter()
    embedder.warm_up()
    load = time.perf_counter() - started
    started = time.perf_counter()
    embedder.embed_batch(texts)
    seconds = time.perf_counter() - started
    return {
        "backend": backend,
        "texts": len(texts),
        "seconds": seconds,
        "texts_per_second": len(texts) / seconds,
        "load_seconds": load,
    }


def bench_query_embedding(queries: list[str], backend: str, onnx_dir: Path | None) -> dict[str, Any]:
    """Bare ``embed_batch([query])`` with ``backend``, p50 and p95, timed as the recipes' floor times torch's."""
    import recipe_latency  # type: ignore[import-not-found]  # next to this script

    from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder

    embedder = SentenceTransformersTextEmbedder(backend=backend, onnx_dir=_text(onnx_dir))
    embedder.warm_up()
    for query in make_queries(random.Random(11), WARM_UP_QUERIES):
        embedder.embed_batch([query])
    samples = []
    for query in queries:
        started = time.perf_counter()
        embedder.embed_batch([query])
        samples.append(time.perf_counter() - started)
    return {"backend": backend} | recipe_latency.pct(samples)


def _text(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def bench_queries(queries: list[str], folder: Path) -> dict[str, Any]:
    """Every recipe of ``recipe_latency.RECIPES`` on ``queries``, each next to its floor (see that module)."""
    from agrag.components.llm.openai_chat_client import OpenAIChatClient
    from agrag.pipelines.runtime import open_runtime
    from agrag.pipelines.settings import Settings, load_settings

    # The tiny cross-encoder and the scripted LLM live in tests/support, which is not installed with agrag: the
    # repository root goes on sys.path (after everything else, so nothing installed is shadowed) to import them.
    sys.path.append(str(REPO_ROOT))
    # bench/recipe_latency.py and evidence_latency.py, next to this script (imported late: they import agrag, after
    # the settings above)
    import evidence_latency  # type: ignore[import-not-found]
    import recipe_latency  # type: ignore[import-not-found]

    from tests.support.scripted_llm import scripted_llm
    from tests.support.tiny_cross_encoder import make_tiny_cross_encoder

    started = time.perf_counter()
    cross_encoder = make_tiny_cross_encoder(folder / "tiny-cross-encoder")
    generated = time.perf_counter() - started
    settings = load_settings()
    retrieval = settings.retrieval.model_copy(update={"cross_encoder_model": cross_encoder})
    runtime = open_runtime([], Settings(settings.agrag, retrieval))
    store, embedder = runtime.store, runtime.embedder
    embedder.warm_up()
    try:
        counts = store.counts()
        if not counts["community_vectors"]:
            raise SystemExit("The ingested corpus has no community reports: THEMATIC would time an empty shard.")
        with scripted_llm(lambda messages: recipe_latency.SCRIPTED_ANSWER) as llm:
            client = OpenAIChatClient(llm.base_url, "scripted", timeout_seconds=30, max_retries=0)
            warm_up = make_queries(random.Random(11), WARM_UP_QUERIES)
            out: dict[str, Any] = recipe_latency.bench_recipes(
                store,
                embedder,
                settings=retrieval,
                llm=client,
                llm_url=llm.base_url,
                cross_encoder_dir=cross_encoder,
                warm_up=warm_up,
                queries=queries,
            )
            llm_requests = len(llm.requests)
        out["evidence"] = evidence_latency.bench_evidence(store, embedder, warm_up=warm_up, queries=queries)
    finally:
        runtime.close()
    return (
        {"queries": len(queries), "store_counts": counts, "llm_requests": llm_requests}
        | out
        | {"cross_encoder_generation_seconds": generated}
    )


def print_evidence(evidence: dict[str, Any]) -> None:
    """The ``discover`` rows next to their floors, then what each floor is made of."""
    header = f"{'evidence':<24} {'p50 ms':>8} {'p95 ms':>8} {'floor p50':>10} {'ratio':>7} {'first ms':>9} {'hits':>5}"
    print(header)
    print("-" * len(header))
    for name, row in evidence["rows"].items():
        print(
            f"{name:<24} {row['p50_ms']:>8.2f} {row['p95_ms']:>8.2f} {row['floor_p50_ms']:>10.2f} "
            f"{row['ratio_p50']:>6.2f}x {row['first_query_ms']:>9.0f} {row['mean_hits']:>5.1f}"
        )
    print()
    for name, row in evidence["rows"].items():
        floor_text = " + ".join(f"{p} {ms:.2f}" for p, ms in row["floor_parts_p50_ms"].items())
        scope = "every document" if row["scope_documents"] is None else f"{row['scope_documents']} documents"
        print(
            f"{name} ({row['mode']}, limit {row['limit']}, {row['candidates_per_leg']} candidates per leg, {scope} of "
            f"{evidence['documents']}): floor p50 ms = {floor_text}; truncated {row['truncated']}, failed legs "
            f"{row['failed_legs']}, hits outside the floor's candidates {row['hits_outside_floor']}"
        )
    print(f"evidence wall (both rows, floors and warm-up): {evidence['wall_seconds']:.1f} s")


def print_table(r: dict[str, Any]) -> None:
    ing, floor, q = r["ingest"], r.get("ingest_floor"), r["query"]
    onnx_floor, onnx_query = r.get("ingest_floor_onnx"), r["query_embedding_onnx"]
    rows = [
        ("date", r["date"]),
        ("machine", f"{r['cpu_cores']} cores, {r['platform']}, Python {r['python']}"),
        ("load average (1 min) before / after queries", " / ".join(f"{x:.2f}" for x in r["load_average"])),
        ("corpus", f"{r['files']} files, {ing['chunks_searchable']} searchable chunks ({ing['chunks_by_kind']})"),
        (
            "graph",
            f"{ing['entities_found']} entities, {ing['relations_found']} relations, {ing['merges']} merges, "
            f"communities {ing['communities_by_level']}, reports {ing['reports_by_method']}",
        ),
        ("ingest stages", f"{ing['seconds']:.1f} s  ({ing['chunks_per_second']:.1f} chunks/s)"),
        ("  per stage (s)", ", ".join(f"{k} {v:.1f}" for k, v in ing["stage_seconds"].items())),
        ("ingest wall (with Prefect)", f"{ing['wall_seconds']:.1f} s"),
    ]
    if floor is not None:
        rows += [
            ("ingest floor (MiniLM only)", f"{floor['seconds']:.1f} s  ({floor['texts_per_second']:.1f} texts/s)"),
            ("ingest ratio stages/floor", f"{ing['seconds'] / floor['seconds']:.2f}x"),
        ]
    if floor is not None and onnx_floor is not None:
        rows.append(
            (
                f"ingest floor ({onnx_floor['backend']})",
                f"{onnx_floor['seconds']:.1f} s  ({onnx_floor['texts_per_second']:.1f} texts/s, "
                f"{floor['seconds'] / onnx_floor['seconds']:.2f}x torch; export {onnx_floor['load_seconds']:.1f} s)",
            )
        )
    parts = q["floor_parts"]
    rows += [
        ("queries (timed, per recipe)", str(q["queries"])),
        ("bare embed p50 / p95", f"{parts['embed']['p50_ms']:.2f} / {parts['embed']['p95_ms']:.2f} ms"),
        (
            f"bare embed p50 / p95 ({onnx_query['backend']})",
            f"{onnx_query['p50_ms']:.2f} / {onnx_query['p95_ms']:.2f} ms  "
            f"({parts['embed']['p50_ms'] / onnx_query['p50_ms']:.2f}x torch at p50)",
        ),
        ("script wall", f"{r['script_wall_seconds']:.1f} s"),
    ]
    width = max(len(name) for name, _ in rows)
    print("agrag ingest + search benchmark")
    print("-" * (width + 40))
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print()
    header = f"{'recipe':<16} {'p50 ms':>8} {'p95 ms':>8} {'floor p50':>10} {'ratio':>7} {'first ms':>9} {'fail':>5}"
    print(header)
    print("-" * len(header))
    for name, row in q["recipes"].items():
        print(
            f"{name:<16} {row['p50_ms']:>8.2f} {row['p95_ms']:>8.2f} {row['floor_p50_ms']:>10.2f} "
            f"{row['ratio_p50']:>6.2f}x {row['first_query_ms']:>9.0f} {row['failed_methods']:>5}"
        )
    print()
    for name, row in q["recipes"].items():
        floor_text = " + ".join(f"{p} {ms:.2f}" for p, ms in row["floor_parts_p50_ms"].items())
        trace_text = ", ".join(f"{step} {ms:.2f}" for step, ms in row["trace_p50_ms"].items())
        print(f"{name}: floor p50 ms = {floor_text}; trace p50 ms: {trace_text}")
        if row["note"]:
            print(f"  ({row['note']})")
    dense = parts["dense_only_chunk_query"]
    print(f"dense-only chunk Edge query (the earlier floor): {dense['p50_ms']:.2f} / {dense['p95_ms']:.2f} ms")
    diagnostics = {p: v for p, v in parts.items() if p.startswith("diag_")}
    explained = ", ".join(f"{p} {v['p50_ms']:.2f} / {v['p95_ms']:.2f}" for p, v in diagnostics.items())
    print(f"not floors (p50 / p95 ms): {explained}")
    print()
    print_evidence(q["evidence"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000, help="chunks in the synthetic corpus")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per recipe (after 5 warm-up ones)")
    parser.add_argument(
        "--skip-ingest-floor", action="store_true", help="skip the bare MiniLM encoding of the corpus (for development)"
    )
    parser.add_argument(
        "--onnx-backend",
        choices=ONNX_BACKENDS,
        default=ONNX_BACKENDS[0],
        help="the ONNX embedder whose ingest and query floors are shown next to torch's",
    )
    parser.add_argument("--output", type=Path, default=RESULTS_FILE, help="the JSON file written")
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
        }
        if not args.skip_ingest_floor:
            result["ingest_floor"] = bench_ingest_floor(folder)
            result["ingest_ratio"] = result["ingest"]["seconds"] / result["ingest_floor"]["seconds"]
            result["ingest_floor_onnx"] = bench_ingest_floor(folder, args.onnx_backend, Path(tmp) / "onnx")
        load_before = os.getloadavg()[0]
        result["query"] = bench_queries(queries, Path(tmp))
        result["query_embedding_onnx"] = bench_query_embedding(queries, args.onnx_backend, Path(tmp) / "onnx")
        result["load_average"] = [load_before, os.getloadavg()[0]]
    result["script_wall_seconds"] = time.perf_counter() - script_started
    print_table(result)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"\nJSON written to {args.output}")


if __name__ == "__main__":
    main()
