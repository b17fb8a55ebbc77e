"""Typing quality and speed of the lexical (no-LLM) extractor on the hand-labelled mentions of ``notes_dev``.

What it runs: the real ingest path's first stages on ``shared/bench/notes_dev/notes`` (``FolderLoader``,
``StructuralChunker`` with its defaults, the searchable chunks), then ``LexicalEntityExtractor().run`` over all
of them as one batch, as ingestion does with an open ontology.

How a labelled mention is scored (``bench/labels/notes_dev_mentions.jsonl``; see ``bench/labels/README.md``):

* **found**: an entity the extractor mentions in a chunk of the same note has the mention's normalized name
  (``normalize_name``), or the normalized name of one of its ``also`` spans. Matching is by note and name: within
  one batch a name has one type, so the sentence is only there for the reader.
* **its type**: the found entity's label (``Person`` ... ``Date``); ``Name``, ``Acronym`` or no entity is untyped.
* A mention labelled with one of the six types is **right** when found with that type. A mention labelled ``Other``
  (a name of another kind) or ``None`` (no name at all) is **wrong** only when found with one of the six types.

The figures, per type and overall (micro-averaged), each for the ``tune`` part, the ``heldout`` part and both:

* **recall** of type T: labelled-T mentions found with type T / labelled-T mentions.
* **precision** of type T: labelled-T mentions found with type T / labelled mentions (of any label, negatives
  included) found with type T.
* **overall recall**: right / mentions labelled with one of the six types.
* **overall precision** (the stricter reading of "of what it found, how much has the right type"): right /
  (typed mentions found, whatever label they were given, plus ``Other``/``None`` mentions found with a type). A
  typed mention found but left untyped counts against it, as does a negative given a type.
* **coverage**: typed mentions found with any label / typed mentions (what the span finder reaches at all).

Speed: the extractor's CPU time on the 45 notes (the least of ``--repeats`` runs, mentions per second), next to the
untyped extractor of ``--baseline-ref`` (the file as it was at that commit, loaded from git), and the same on
``--synthetic`` chunks of ``make bench``'s generated prose and on the notes' chunks repeated to that count.

Run it with ``.venv/bin/python bench/typing_eval.py`` (``make eval`` does); ``--errors tune`` lists the tune part's
misses. Results are written to ``bench/results/typing_eval.json``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agrag.service.runtime_env import apply_offline_defaults

apply_offline_defaults()  # before Haystack is imported

from agrag.components.chunkers.structural_chunker import StructuralChunker  # noqa: E402
from agrag.components.data_models.chunk import Chunk  # noqa: E402
from agrag.components.data_models.entity import is_typed, normalize_name  # noqa: E402
from agrag.components.data_models.extraction import Extraction  # noqa: E402
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor  # noqa: E402
from agrag.components.loaders.folder_loader import FolderLoader  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
LABELS_FILE = REPO_ROOT / "bench" / "labels" / "notes_dev_mentions.jsonl"
RESULTS_FILE = REPO_ROOT / "bench" / "results" / "typing_eval.json"
# The last commit whose extractor typed nothing (main with the predicate facts, before the typer): the speed baseline.
BASELINE_REF = "0ded3b3"
EXTRACTOR_PATH = "components/extractors/lexical_entity_extractor.py"
TYPES = ("Person", "Organization", "Place", "Product", "Event", "Date")
NEGATIVE = frozenset({"Other", "None"})
PARTS = ("tune", "heldout", "all")

Extract = Callable[[list[Chunk]], Extraction]


@dataclass(frozen=True, slots=True)
class Label:
    """One hand-labelled mention."""

    note: int
    mention: str
    type: str
    part: str
    keys: frozenset[str]


def bench_dir() -> Path:
    """``AGRAG_EVAL_BENCH_DIR`` (the Makefile exports ``../shared/bench``), else the shared folder beside the repo."""
    given = os.environ.get("AGRAG_EVAL_BENCH_DIR")
    path = Path(given) if given else REPO_ROOT.parent / "shared" / "bench"
    return path if path.is_absolute() else (Path.cwd() / path).resolve()


def load_labels(path: Path) -> list[Label]:
    labels = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        keys = frozenset(normalize_name(m) for m in (row["mention"], *row.get("also", ())))
        labels.append(Label(row["note"], row["mention"], row["type"], row["part"], keys))
    return labels


def note_chunks(notes_dir: Path, corpus: list[dict[str, str]]) -> tuple[list[Chunk], dict[str, int]]:
    """The searchable chunks of the notes, and the corpus index of each chunk's note (by its unique title)."""
    loaded = FolderLoader().run(root=str(notes_dir))["documents"]
    chunks = [c for c in StructuralChunker().run(documents=loaded)["chunks"] if c.searchable]  # type: ignore[arg-type]
    index = {row["title"]: i for i, row in enumerate(corpus)}
    return chunks, {c.id: index[c.title] for c in chunks}


def found_types(extraction: Extraction, chunk_note: dict[str, int]) -> dict[tuple[int, str], str]:
    """(note, normalized name) -> the label found there; a typed label wins over an untyped one."""
    labels: dict[str, tuple[str, str]] = {e.id: (e.name, e.label) for e in extraction.entities}
    found: dict[tuple[int, str], str] = {}
    for mention in extraction.mentions:
        name, label = labels[mention.entity_id]
        key = (chunk_note[mention.chunk_id], normalize_name(name))
        if key not in found or (is_typed(label) and not is_typed(found[key])):
            found[key] = label
    return found


def label_found(label: Label, found: dict[tuple[int, str], str]) -> str | None:
    """The label the extractor gave this mention, or None when it did not find it."""
    hits = [found[(label.note, key)] for key in sorted(label.keys) if (label.note, key) in found]
    typed = [h for h in hits if h in TYPES]
    return typed[0] if typed else (hits[0] if hits else None)


def score(labels: list[Label], found: dict[tuple[int, str], str]) -> dict[str, Any]:
    """Precision, recall and coverage per type and overall, per part (see the module docstring)."""
    out: dict[str, Any] = {}
    for part in PARTS:
        rows = [(lab, label_found(lab, found)) for lab in labels if part in ("all", lab.part)]
        per_type: dict[str, dict[str, float | int]] = {}
        for t in TYPES:
            gold = [got for lab, got in rows if lab.type == t]
            predicted = [lab for lab, got in rows if got == t]
            right = sum(1 for got in gold if got == t)
            per_type[t] = {
                "labelled": len(gold),
                "right": right,
                "predicted": len(predicted),
                "precision": _ratio(right, len(predicted)),
                "recall": _ratio(right, len(gold)),
            }
        positives = [(lab, got) for lab, got in rows if lab.type in TYPES]
        right = sum(1 for lab, got in positives if got == lab.type)
        reached = sum(1 for _, got in positives if got is not None)
        wrongly_typed = sum(1 for lab, got in rows if lab.type in NEGATIVE and got in TYPES)
        out[part] = {
            "types": per_type,
            "mentions": len(rows),
            "positives": len(positives),
            "negatives": len(rows) - len(positives),
            "right": right,
            "recall": _ratio(right, len(positives)),
            "precision": _ratio(right, reached + wrongly_typed),
            "coverage": _ratio(reached, len(positives)),
            "negatives_typed": wrongly_typed,
        }
    return out


def _ratio(a: int, b: int) -> float:
    return round(100.0 * a / b, 1) if b else 0.0


def errors(labels: list[Label], found: dict[tuple[int, str], str], part: str) -> list[str]:
    lines = []
    for lab in labels:
        if part not in ("all", lab.part):
            continue
        got = label_found(lab, found)
        bad = got != lab.type if lab.type in TYPES else got in TYPES
        if bad:
            lines.append(f"  note {lab.note:2d}  {lab.mention!r:40} labelled {lab.type:12} got {got}")
    return lines


def baseline_extractor(ref: str) -> Extract | None:
    """The extractor as it was at ``ref`` (read with ``git show``), or None when git cannot give it."""
    try:
        source = subprocess.run(
            ["git", "show", f"{ref}:{EXTRACTOR_PATH}"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "baseline_lexical_entity_extractor.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("baseline_lexical_entity_extractor", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    extractor = module.LexicalEntityExtractor()
    return lambda chunks: extractor.run(chunks=chunks)["extraction"]


def timed(runs: dict[str, Extract], chunks: list[Chunk], repeats: int) -> dict[str, tuple[float, int]]:
    """Per extractor, the least CPU time of ``repeats`` runs (interleaved, so a busy machine slows both alike) and
    the mentions (entity occurrences) one run emits."""
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    mentions: dict[str, int] = {}
    for _ in range(repeats):
        for name, extract in runs.items():
            gc.collect()
            start = time.process_time()
            extraction = extract(chunks)
            seconds[name].append(time.process_time() - start)
            mentions[name] = sum(m.count for m in extraction.mentions)
    return {name: (min(seconds[name]), mentions[name]) for name in runs}


def synthetic_sets(notes: list[Chunk], size: int) -> dict[str, list[Chunk]]:
    """``size`` chunks of ``make bench``'s generated prose, and the notes' chunks repeated to ``size``."""
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    from bench_ingest_search import paragraph  # type: ignore[import-not-found]  # make bench's generator

    rng = random.Random(7)
    prose = []
    for i in range(size):
        text = paragraph(rng)
        prose.append(Chunk(f"s{i // 20}.v.{i % 20}", f"s{i // 20}", "v", text, (f"Notes {i // 20}",), 0, 0, len(text)))
    repeated = [replace(notes[i % len(notes)], id=f"r{i}") for i in range(size)]
    return {"bench prose": prose, "notes repeated": repeated}


def speed(chunks: list[Chunk], synthetic: int, repeats: int, ref: str) -> list[dict[str, Any]]:
    current = LexicalEntityExtractor()
    runs: dict[str, Extract] = {"typed": lambda c: current.run(chunks=c)["extraction"]}
    baseline = baseline_extractor(ref)
    if baseline is not None:
        runs["untyped"] = baseline
    sets = {"notes_dev": chunks, **(synthetic_sets(chunks, synthetic) if synthetic else {})}
    rows = []
    for name, batch in sets.items():
        times = timed(runs, batch, repeats)
        now, mentions = times["typed"]
        row: dict[str, Any] = {"set": name, "chunks": len(batch), "seconds": round(now, 4), "mentions": mentions}
        row["mentions_per_s"] = round(mentions / now) if now else 0
        if "untyped" in times:
            before, before_mentions = times["untyped"]
            row |= {"baseline_seconds": round(before, 4), "baseline_mentions": before_mentions}
            row["ratio"] = round(now / before, 2) if before else None
            # the typed extractor emits more mentions (dates, codes): the cost of each, against the untyped one's
            row["ratio_per_mention"] = round((now / mentions) / (before / before_mentions), 2) if before else None
        rows.append(row)
    return rows


def print_scores(scores: dict[str, Any]) -> None:
    for part in PARTS:
        s = scores[part]
        print(f"\n{part}: {s['mentions']} mentions ({s['positives']} typed, {s['negatives']} Other/None)")
        print(f"  {'type':13} {'labelled':>8} {'right':>6} {'predicted':>9} {'P %':>6} {'R %':>6}")
        for t, row in s["types"].items():
            print(
                f"  {t:13} {row['labelled']:8d} {row['right']:6d} {row['predicted']:9d} "
                f"{row['precision']:6.1f} {row['recall']:6.1f}"
            )
        print(
            f"  {'overall':13} {s['positives']:8d} {s['right']:6d} {'':9} {s['precision']:6.1f} {s['recall']:6.1f}"
            f"   coverage {s['coverage']:.1f} %, negatives typed {s['negatives_typed']}"
        )


def print_speed(rows: list[dict[str, Any]]) -> None:
    print("\nspeed (least CPU time of interleaved runs)")
    for row in rows:
        line = f"  {row['set']:15} {row['chunks']:6d} chunks  {row['seconds']:.3f} s"
        line += f"  {row['mentions_per_s']:>8} mentions/s"
        if "baseline_seconds" in row:
            line += f"   untyped baseline {row['baseline_seconds']:.3f} s  ratio {row['ratio']}"
            line += f" ({row['mentions']} mentions against {row['baseline_mentions']}: "
            line += f"{row['ratio_per_mention']} per mention)"
        print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS_FILE)
    parser.add_argument("--errors", choices=("tune", "heldout", "all", "none"), default="none")
    parser.add_argument("--synthetic", type=int, default=5000, help="chunks per synthetic set (0: none)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline-ref", default=BASELINE_REF)
    parser.add_argument("--output", type=Path, default=RESULTS_FILE)
    args = parser.parse_args()

    notes_root = bench_dir() / "notes_dev"
    corpus = json.loads((notes_root / "corpus.json").read_text(encoding="utf-8"))
    chunks, chunk_note = note_chunks(notes_root / "notes", corpus)
    labels = load_labels(args.labels)
    extraction = LexicalEntityExtractor().run(chunks=chunks)["extraction"]
    found = found_types(extraction, chunk_note)
    scores = score(labels, found)
    print(f"notes_dev: {len(corpus)} notes, {len(chunks)} searchable chunks; {len(labels)} labelled mentions")
    print_scores(scores)
    if args.errors != "none":
        print(f"\nerrors ({args.errors} part):")
        print("\n".join(errors(labels, found, args.errors)) or "  none")
    rows = speed(chunks, args.synthetic, args.repeats, args.baseline_ref)
    print_speed(rows)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"scores": scores, "speed": rows}, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
