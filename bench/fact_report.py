"""What the offline extractor's facts look like on a corpus: named against ``RELATED_TO``, predicates, precision, time.

Run from the repository root::

    .venv/bin/python bench/fact_report.py                         # notes_dev, with its hand check
    .venv/bin/python bench/fact_report.py --corpus ../shared/bench/musique_dev/musique_train_corpus.json  # and its
    .venv/bin/python bench/fact_report.py --sample 60 --seed 44     # random named facts, as JSON lines to label
    .venv/bin/python bench/fact_report.py --time --baseline main    # extractor time against another commit's

The corpus (a JSON list of ``{"title", "text"}``) is written as one ``.txt`` file per passage (title line, then
text), loaded, chunked and extracted as ``agrag ingest`` does with the default ingest settings. Relations are
counted by id, so a fact read in two chunks counts once. The hand check (``bench/labels/<corpus>_facts_check.jsonl``)
holds one fact a line with a ``verdict``: ``correct`` when the subject and object mentions are the things the
sentence names (a name the extractor cut short still counts if it names the thing) and the predicate is what the
sentence asserts between them, in that direction; else ``wrong``, with a note. The report gives its precision, and
how many of the checked facts the extractor still finds.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from scale_corpus import Names, section  # type: ignore[import-not-found]  # bench/, on sys.path as the script's folder

from agrag.components.chunkers.structural_chunker import StructuralChunker
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.extraction import Extraction
from agrag.components.extractors.lexical_entity_extractor import CO_OCCURRENCE, LexicalEntityExtractor
from agrag.components.loaders.folder_loader import FolderLoader

ROOT = Path(__file__).resolve().parent.parent
NOTES_DEV = ROOT.parent / "shared" / "bench" / "notes_dev" / "corpus.json"
LABELS = ROOT / "bench" / "labels"
SYNTHETIC_CHUNKS = 5_000


def corpus_chunks(corpus: Path) -> list[Chunk]:
    """The searchable chunks of a corpus, as ingestion cuts them."""
    passages = json.loads(corpus.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / corpus.parent.name  # named after the corpus: chunk ids are the same on every run
        folder.mkdir()
        for index, passage in enumerate(passages):
            text = f"{passage['title']}\n{passage['text']}"
            (folder / f"{index:06d}.txt").write_text(text, encoding="utf-8")
        documents = FolderLoader().run(root=str(folder))["documents"]
    return [c for c in StructuralChunker().run(documents=documents)["chunks"] if c.searchable]


def synthetic_chunks(count: int, seed: int = 7) -> list[Chunk]:
    """``count`` chunks of ``make bench-scale``'s synthetic notes (one 300-500 character section each)."""
    rng, names = random.Random(seed), Names.seeded(seed)
    chunks = []
    for order in range(count):
        text = section(rng, names)
        chunks.append(Chunk(f"d{order // 20}.v.{order}", f"d{order // 20}", "v", text, ("T",), order, 0, len(text)))
    return chunks


def facts(extraction: Extraction) -> list[dict[str, Any]]:
    """One row per distinct relation: subject, predicate, object, sentence and chunks, in extraction order."""
    names = {e.id: e.name for e in extraction.entities}
    rows: dict[str, dict[str, Any]] = {}
    for rel in extraction.relations:
        row = rows.setdefault(
            rel.id,
            {
                "subject": names[rel.source_id],
                "predicate": rel.type,
                "object": names[rel.target_id],
                "sentence": rel.description,
                "chunks": [],
            },
        )
        row["chunks"] += [c for c in rel.chunk_ids if c not in row["chunks"]]
    return list(rows.values())


def _key(row: dict[str, Any]) -> tuple[str, str, str]:
    return row["subject"], row["predicate"], row["object"]


def hand_check(rows: list[dict[str, Any]], path: Path) -> dict[str, Any]:
    """Precision of the labelled facts, and how many of them the extractor still finds."""
    labels = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    found = {_key(r) for r in rows}
    by_corpus: dict[str, list[dict[str, Any]]] = {}
    for label in labels:
        by_corpus.setdefault(label.get("corpus", "?"), []).append(label)
    summary = {}
    for corpus, group in by_corpus.items():
        correct = sum(label["verdict"] == "correct" for label in group)
        summary[corpus] = {"checked": len(group), "correct": correct, "precision": round(100 * correct / len(group), 1)}
    correct = sum(label["verdict"] == "correct" for label in labels)
    summary["all"] = {
        "checked": len(labels),
        "correct": correct,
        "precision": round(100 * correct / max(1, len(labels)), 1),
        "still_found_here": sum(_key(label) in found for label in labels),
    }
    return summary


def _extractor_at(ref: str) -> type:
    """``LexicalEntityExtractor`` as it is at git ``ref``, loaded from that commit's source."""
    source = subprocess.run(
        ["git", "show", f"{ref}:components/extractors/lexical_entity_extractor.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "baseline_lexical_extractor.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("baseline_lexical_extractor", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module.LexicalEntityExtractor  # type: ignore[no-any-return]


def seconds(extractors: dict[str, Any], chunks: list[Chunk], repeats: int = 4) -> dict[str, tuple[float, float]]:
    """(CPU, wall) seconds of extracting ``chunks`` in one batch, per extractor: the least of ``repeats`` runs.

    The runs are interleaved, and CPU time is given beside wall time: on a shared machine the wall time says as much
    about the neighbours as about the code.
    """
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in extractors}
    for _ in range(repeats):
        for name, extractor in extractors.items():
            gc.collect()
            cpu, wall = time.process_time(), time.perf_counter()
            extractor.run(chunks=chunks)
            times[name].append((time.process_time() - cpu, time.perf_counter() - wall))
    return {name: (min(c for c, _ in runs), min(w for _, w in runs)) for name, runs in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=NOTES_DEV)
    parser.add_argument(
        "--check", type=Path, help="hand-checked facts (JSON lines; default bench/labels/<corpus>_facts_check.jsonl)"
    )
    parser.add_argument("--sample", type=int, default=0, help="print this many random named facts as JSON lines")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--time", action="store_true", help="time the extractor on the corpus and synthetic chunks")
    parser.add_argument("--baseline", default="", help="git ref whose extractor to time against (with --time)")
    args = parser.parse_args()

    chunks = corpus_chunks(args.corpus)
    rows = facts(LexicalEntityExtractor().run(chunks=chunks)["extraction"])
    named = [r for r in rows if r["predicate"] != CO_OCCURRENCE]
    if args.sample:
        for row in random.Random(args.seed).sample(named, min(args.sample, len(named))):
            print(json.dumps({"corpus": args.corpus.parent.name, **row}, ensure_ascii=False))
        return
    share = 100 * len(named) / max(1, len(rows))
    print(f"corpus: {args.corpus} ({len(chunks)} chunks)")
    print(
        f"relations: {len(rows)}, named facts: {len(named)} ({share:.1f} %), {CO_OCCURRENCE}: {len(rows) - len(named)}"
    )
    print("top predicates (distinct facts):")
    for predicate, count in Counter(r["predicate"] for r in named).most_common(30):
        print(f"  {count:5d}  {predicate}")
    check = args.check or LABELS / f"{args.corpus.parent.name}_facts_check.jsonl"
    if check.exists():
        print(f"hand check ({check.name}):", json.dumps(hand_check(rows, check)))
    if args.time:
        synthetic = synthetic_chunks(SYNTHETIC_CHUNKS)
        extractors = {"now": LexicalEntityExtractor()}
        if args.baseline:
            extractors[args.baseline] = _extractor_at(args.baseline)()
        on_corpus, on_synthetic = seconds(extractors, chunks, repeats=10), seconds(extractors, synthetic)
        for name in extractors:
            (corpus_cpu, corpus_wall), (synthetic_cpu, synthetic_wall) = on_corpus[name], on_synthetic[name]
            print(
                f"time [{name}]: corpus {corpus_cpu:.3f} s CPU ({corpus_wall:.3f} s wall), "
                f"{SYNTHETIC_CHUNKS} synthetic chunks {synthetic_cpu:.3f} s CPU ({synthetic_wall:.3f} s wall)"
            )


if __name__ == "__main__":
    sys.exit(main())
