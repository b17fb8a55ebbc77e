"""Benchmark: `agrag serve` under 20 concurrent HTTP clients, each operation next to its in-process latency.

What it measures, in one run on the example corpus (examples/acme_notes):

* In process (the floor): the same operations called directly on a ``Runtime`` in this process, one at a time:
  ``SearchEngine.search_sync`` with HYBRID and MULTI_HOP, ``EvidenceSession.discover`` (hybrid, limit 10) and
  ``EvidenceSession.fetch`` of three ids. Its p50 is what one request costs without HTTP, JSON or other clients.
* Served: ``agrag serve --port 0`` as a subprocess over the same data dir. First one client alone for 10 s: its p50
  next to the in-process p50 is what HTTP and JSON add. Then ``--clients`` threads (20 by default), each with its
  own HTTP connection and evidence session, sending those four operations round-robin for ``--seconds`` (30 by
  default). Every non-2xx answer or transport error counts as an error. Reported per operation: requests, p50 and
  p95. On 2 cores, 20 clients queue behind each other: their p50 includes that wait, which is the point of the
  measurement; the requests per second say what the machine serves.

The data dir, Prefect home and logs live in a temporary folder; results are printed and saved as JSON to
``bench/results/service_load.json``. Run it with ``make bench-service`` or
``.venv/bin/python bench/service_load.py [--clients N] [--seconds S]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agrag.service.runtime_env import apply_offline_defaults

apply_offline_defaults()  # before Haystack, Prefect or transformers are imported

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples" / "acme_notes"
RESULTS_FILE = REPO_ROOT / "bench" / "results" / "service_load.json"
AGRAG = str(Path(sys.executable).with_name("agrag"))
OPERATIONS = ("search hybrid", "search multi_hop", "discover", "fetch")
ONE_CLIENT_SECONDS = 10.0  # one client alone first: what HTTP and JSON add to a request
QUERIES = (
    "Who wrote the Orion Planner?",
    "What caused the replanning storm in Lyon?",
    "Who owns the Atlas Controller?",
    "Which incident involved the planner that Maria Chen wrote?",
    "Which sites does Camille Durand lead?",
    "What changed in release 2.4?",
    "Which vendor supplies the lidar units?",
    "How do I restart the Vega perception stack?",
    "Who worked with Lena Brandt?",
    "What does the runbook say about failover?",
)


def pct(values: list[float], q: float) -> float:
    """The q-quantile of ``values`` (nearest rank), in the unit given."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ingest(data_dir: Path, env: dict[str, str]) -> None:
    """The example corpus into ``data_dir`` with the real CLI (in-process Prefect)."""
    done = subprocess.run([AGRAG, "ingest", str(EXAMPLES)], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"agrag ingest failed:\n{done.stderr}")


def in_process(data_dir: Path, rounds: int) -> dict[str, float]:
    """p50 (ms) of each operation called directly on a Runtime, one at a time (after a warm-up)."""
    from agrag.pipelines.runtime import open_runtime
    from agrag.pipelines.settings import load_settings

    settings = load_settings().with_data_dir(data_dir)
    samples: dict[str, list[float]] = {op: [] for op in OPERATIONS}
    with open_runtime([], settings) as runtime:
        engine, session = runtime.engine, runtime.evidence_session()
        recipes = {
            "search hybrid": runtime.config_for(["recipe=hybrid"]).recipe,
            "search multi_hop": runtime.config_for(["recipe=multi_hop"]).recipe,
        }
        ids = [h.id for h in session.discover(QUERIES[0]).hits[:3]]
        calls: dict[str, Callable[[str], Any]] = {
            "search hybrid": lambda q: engine.search_sync(q, recipes["search hybrid"]),
            "search multi_hop": lambda q: engine.search_sync(q, recipes["search multi_hop"]),
            "discover": lambda q: session.discover(q, "hybrid", 10),
            "fetch": lambda q: session.fetch(ids),
        }
        for call in calls.values():
            call(QUERIES[0])  # warm-up: pipeline build, graph snapshot
        for i in range(rounds):
            query = QUERIES[i % len(QUERIES)]
            for op, call in calls.items():
                started = time.perf_counter()
                call(query)
                samples[op].append((time.perf_counter() - started) * 1000)
    return {op: statistics.median(values) for op, values in samples.items()}


class Serve:
    """`agrag serve --port 0` over a data dir; its URL and owner token come from the server file."""

    def __init__(self, data_dir: Path, env: dict[str, str], log: Path) -> None:
        self.log = log.open("w")
        self.process = subprocess.Popen(
            [AGRAG, "serve", "--port", "0"], env=env, stdout=self.log, stderr=subprocess.STDOUT, text=True
        )
        server_file = data_dir / ".agrag.server.json"
        deadline = time.monotonic() + 120
        while not server_file.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"agrag serve did not start; see {log}")
            time.sleep(0.2)
        info = json.loads(server_file.read_text())
        self.url, self.token = info["url"], info["token"]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)
        self.log.close()


def client_loop(url: str, token: str, stop_at: float, out: dict[str, list[float]], errors: list[str]) -> None:
    """One client: its own connection and session; the four operations round-robin until ``stop_at``."""
    import httpx

    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        session = http.post("/v1/sessions", json={}).json()["id"]
        ids: list[str] = []
        bodies: dict[str, Callable[[str], tuple[str, dict[str, Any]]]] = {
            "search hybrid": lambda q: ("/v1/search", {"query": q, "recipe": "hybrid"}),
            "search multi_hop": lambda q: ("/v1/search", {"query": q, "recipe": "multi_hop"}),
            "discover": lambda q: (f"/v1/sessions/{session}/discover", {"query": q, "mode": "hybrid", "limit": 10}),
            "fetch": lambda q: (f"/v1/sessions/{session}/fetch", {"ids": ids or ["missing.000000000000.c0"]}),
        }
        i = 0
        while time.monotonic() < stop_at:
            op = OPERATIONS[i % len(OPERATIONS)]
            path, body = bodies[op](QUERIES[(i // len(OPERATIONS)) % len(QUERIES)])
            started = time.perf_counter()
            try:
                response = http.post(path, json=body)
            except httpx.HTTPError as exc:
                errors.append(f"{op}: {type(exc).__name__}: {exc}")
            else:
                elapsed = (time.perf_counter() - started) * 1000
                if response.is_success:
                    out[op].append(elapsed)
                    if op == "discover" and not ids:
                        ids = [h["id"] for h in response.json()["hits"][:3]]
                else:
                    errors.append(f"{op}: HTTP {response.status_code}: {response.text[:200]}")
            i += 1


def served(url: str, token: str, clients: int, seconds: float) -> tuple[dict[str, list[float]], list[str]]:
    """Latencies (ms) per operation and the errors of ``clients`` concurrent clients for ``seconds``."""
    results: list[dict[str, list[float]]] = [{op: [] for op in OPERATIONS} for _ in range(clients)]
    errors: list[str] = []
    stop_at = time.monotonic() + seconds
    threads = [
        threading.Thread(target=client_loop, args=(url, token, stop_at, results[i], errors)) for i in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    merged = {op: [ms for r in results for ms in r[op]] for op in OPERATIONS}
    return merged, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=30, help="in-process calls of each operation")
    parser.add_argument("--output", type=Path, default=RESULTS_FILE)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agrag-service-load-") as tmp:
        root = Path(tmp)
        data_dir = root / "data"
        env = {**os.environ, "AGRAG_DATA_DIR": str(data_dir), "PREFECT_HOME": str(root / "prefect")}
        env.pop("PREFECT_API_URL", None)
        os.environ["AGRAG_DATA_DIR"] = str(data_dir)
        print(f"Ingesting {EXAMPLES.name} ...", flush=True)
        ingest(data_dir, env)
        print(f"In-process floor: {args.rounds} calls of each operation ...", flush=True)
        floor = in_process(data_dir, args.rounds)
        print(f"Serving; {args.clients} clients for {args.seconds:.0f} s ...", flush=True)
        server = Serve(data_dir, env, root / "serve.log")
        try:
            alone, alone_errors = served(server.url, server.token, 1, ONE_CLIENT_SECONDS)
            latencies, errors = served(server.url, server.token, args.clients, args.seconds)
            errors = alone_errors + errors
        finally:
            server.stop()
    rows = {
        op: {
            "requests": len(values),
            "p50_ms": pct(values, 0.5) if values else None,
            "p95_ms": pct(values, 0.95) if values else None,
            "one_client_p50_ms": pct(alone[op], 0.5) if alone[op] else None,
            "in_process_p50_ms": floor[op],
            "ratio_one_client_p50": (pct(alone[op], 0.5) / floor[op]) if alone[op] else None,
        }
        for op, values in latencies.items()
    }
    header = (
        f"{'operation':<18} {'in-process p50':>15} {'1 client p50':>13} {'ratio':>6} "
        f"{f'{args.clients} clients: requests':>21} {'p50 ms':>8} {'p95 ms':>8}"
    )
    print(header)
    print("-" * len(header))
    for op, row in rows.items():
        print(
            f"{op:<18} {row['in_process_p50_ms']:>15.1f} {row['one_client_p50_ms'] or 0:>13.1f} "
            f"{row['ratio_one_client_p50'] or 0:>5.2f}x {row['requests']:>21} {row['p50_ms'] or 0:>8.1f} "
            f"{row['p95_ms'] or 0:>8.1f}"
        )
    total = sum(r["requests"] for r in rows.values())
    print(
        f"{total} requests from {args.clients} clients in {args.seconds:.0f} s ({total / args.seconds:.1f}/s), "
        f"{len(errors)} errors"
    )
    for error in errors[:10]:
        print(f"  {error}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    summary = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "clients": args.clients,
        "seconds": args.seconds,
        "requests": total,
        "errors": len(errors),
        "error_samples": errors[:20],
        "operations": rows,
    }
    args.output.write_text(json.dumps(summary, indent=1))
    print(f"Saved {args.output}")
    if errors:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
