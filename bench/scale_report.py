"""Tables, growth slopes and the plot of ``scale_bench.py``'s results."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

TARGET_RECIPES = ("hybrid", "graph_expand", "multi_hop")  # issue 21: p95 under 200 ms at 1M chunks
TARGET_P95_MS = 200.0
TARGET_RSS_MIB = 8 * 1024.0
TARGET_WRITE_RATIO = 1.5


def latency_rows(size: dict[str, Any]) -> dict[str, dict[str, float]]:
    """p50, p95 and floor p50 of every recipe and discover row of one size."""
    serve = size["serve"]
    rows = {
        name: {"p50_ms": r["p50_ms"], "p95_ms": r["p95_ms"], "floor_p50_ms": r["floor_p50_ms"]}
        for name, r in serve["recipes"].items()
    }
    for name, r in serve["evidence"]["rows"].items():
        rows[name] = {"p50_ms": r["p50_ms"], "p95_ms": r["p95_ms"], "floor_p50_ms": r["floor_p50_ms"]}
    return rows


def _slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log(y) on log(x); None with fewer than two usable points."""
    points = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len(points) < 2:
        return None
    mx = sum(p[0] for p in points) / len(points)
    my = sum(p[1] for p in points) / len(points)
    var = sum((p[0] - mx) ** 2 for p in points)
    return sum((p[0] - mx) * (p[1] - my) for p in points) / var if var else None


def growth(sizes: list[dict[str, Any]]) -> dict[str, float | None]:
    """Log-log slopes against the corpus size: every row's p95, the peak RSS of ingest and serve, ingest seconds."""
    xs = [float(s["chunks"]) for s in sizes]
    out: dict[str, float | None] = {}
    if sizes:
        for name in latency_rows(sizes[0]):
            out[f"{name} p95"] = _slope(xs, [latency_rows(s)[name]["p95_ms"] for s in sizes])
    out["serving peak RSS"] = _slope(xs, [s["serve"]["serving_peak_rss_mib"] for s in sizes])
    out["ingest peak RSS"] = _slope(xs, [s["ingest"]["peak_rss_mib"] for s in sizes])
    out["ingest seconds"] = _slope(xs, [s["ingest"]["seconds"] for s in sizes])
    # The first recipe that reads entity names or walks passages builds the ppr snapshot (entity, run first): the
    # slowest first query is that build, whichever recipe paid it.
    out["first query (ppr snapshot)"] = _slope(xs, [max(s["serve"]["first_query_ms"].values()) for s in sizes])
    return out


def print_tables(result: dict[str, Any]) -> None:
    """The per-size tables and the growth slopes."""
    print(f"agrag scale benchmark, {result['date']}, {result['cpu_cores']} cores, embedder {result['embedder']}")
    for size in result["sizes"]:
        ing, floor, serve = size["ingest"], size["write_floor"], size["serve"]
        print(f"\n== {size['chunks']:,} chunks ({size['files']:,} files) ==")
        print(
            f"graph: {ing['entities']:,} entities, {ing['relations']:,} relations, {ing['merges']:,} merges; "
            f"disk {ing['disk_mib']['graph']:.0f} MiB graph + {ing['disk_mib']['vectors']:.0f} MiB vectors"
        )
        stages = ", ".join(f"{k} {v:.1f}" for k, v in ing["stage_seconds"].items())
        print(f"ingest {ing['seconds']:.0f} s ({ing['chunks_per_second']:.0f} chunks/s), stages (s): {stages}")
        print(
            f"ingest peak RSS {ing['peak_rss_mib']:.0f} MiB; serving peak RSS {serve['serving_peak_rss_mib']:.0f} MiB"
        )
        kz, qd = floor["kuzu"], floor["qdrant"]
        print(
            f"write stage {ing['stage_seconds'].get('write', 0):.1f} s vs bare writes {floor['seconds']:.1f} s "
            f"({floor['write_stage_ratio']:.1f}x): Kùzu COPY {kz['rows']:,} rows in {kz['seconds']:.1f} s "
            f"({kz['rows_per_second']:,.0f}/s), Qdrant Edge {qd['points']:,} points in {qd['seconds']:.1f} s "
            f"({qd['points_per_second']:,.0f}/s)"
        )
        first = ", ".join(f"{k} {v:.0f}" for k, v in serve["first_query_ms"].items())
        print(f"open {serve['open_seconds']:.1f} s; first query ms: {first}")
        header = f"{'row':<26} {'p50 ms':>8} {'p95 ms':>8} {'floor p50':>10} {'ratio':>7}"
        print(header)
        print("-" * len(header))
        for name, row in latency_rows(size).items():
            ratio = row["p50_ms"] / row["floor_p50_ms"] if row["floor_p50_ms"] else float("nan")
            print(f"{name:<26} {row['p50_ms']:>8.2f} {row['p95_ms']:>8.2f} {row['floor_p50_ms']:>10.2f} {ratio:>6.2f}x")
    print("\ngrowth (log-log slope against the corpus size; 1 = linear, 0 = flat):")
    for name, slope in result["growth"].items():
        print(f"  {name:<34} {'n/a' if slope is None else f'{slope:.2f}'}")


def plot(result: dict[str, Any], path: Path) -> None:
    """p95 of every row and the peak RSS against the corpus size, log-log, with the issue's targets drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = result["sizes"]
    xs = [s["chunks"] for s in sizes]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.5))
    for name in latency_rows(sizes[0]):
        ys = [latency_rows(s)[name]["p95_ms"] for s in sizes]
        style = "-o" if name in TARGET_RECIPES else "--."
        left.plot(xs, ys, style, label=name, linewidth=2 if name in TARGET_RECIPES else 1)
    left.axhline(TARGET_P95_MS, color="red", linestyle=":", label="target p95 (hybrid, graph_expand, multi_hop)")
    left.set(xscale="log", yscale="log", xlabel="chunks", ylabel="p95 ms", title="Query p95 (hashed embedder)")
    left.legend(fontsize=7)
    right.plot(xs, [s["serve"]["serving_peak_rss_mib"] for s in sizes], "-o", label="serving peak RSS")
    right.plot(xs, [s["ingest"]["peak_rss_mib"] for s in sizes], "-s", label="ingest peak RSS")
    right.plot(xs, [s["ingest"]["disk_mib"]["data_dir"] for s in sizes], "--^", label="data dir on disk")
    right.axhline(TARGET_RSS_MIB, color="red", linestyle=":", label="target serving RSS (8 GiB)")
    right.set(xscale="log", yscale="log", xlabel="chunks", ylabel="MiB", title="Memory and disk")
    right.legend(fontsize=8)
    fig.suptitle(f"agrag scale benchmark, {result['date'][:10]}, {result['cpu_cores']} CPU cores")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
