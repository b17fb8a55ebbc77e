"""The resolver's time on a large batch, without and with the short-form step (offline: no embeddings, no LLM).

Corpora: ``scale`` (the synthetic notes of ``scale_corpus.py``, one chunk per section, ``--chunks`` of them) and the
eval sets ``hotpotqa_dev`` and ``musique_dev`` (one chunk per passage). The lexical extractor runs once, untimed;
then each resolver runs ``--repeat`` times, alternating, and the median CPU time (``process_time``: the machine is
shared) is printed with the entity counts.

    .venv/bin/python bench/resolver_timing.py scale --chunks 10000
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from pathlib import Path

from notes_dev_links import dataset  # type: ignore[import-not-found]  # a script beside this one
from scale_corpus import files  # type: ignore[import-not-found]

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.extraction import Extraction
from agrag.components.data_models.resolution import MERGED, Resolution
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.resolvers.entity_resolver import EntityResolver


def scale_chunks(count: int) -> list[Chunk]:
    """The synthetic notes, one chunk per ``##`` section."""
    chunks = []
    for name, text in files(count, seed=7):
        _, *sections = text.split("\n## ")
        for order, section in enumerate(sections):
            chunks.append(Chunk(chunk_id_for(name, "v1", order), name, "v1", section, (), order, 0, len(section)))
    return chunks


def eval_chunks(name: str) -> list[Chunk]:
    """One chunk per passage of an eval set, titled by its passage."""
    data = dataset(name, Path(os.environ.get("AGRAG_EVAL_BENCH_DIR", "../shared/bench")))
    return [
        Chunk(chunk_id_for(f"{i:06d}", "v1", 0), f"{i:06d}", "v1", p.document_text, (), 0, 0, 0, title=p.title)
        for i, p in enumerate(data.corpus)
    ]


def timed(resolver: EntityResolver, extraction: Extraction) -> tuple[float, Resolution]:
    gc.collect()  # each run starts with the same garbage to collect
    start = time.process_time()
    resolution: Resolution = resolver.run(extraction=extraction)["resolution"]
    return time.process_time() - start, resolution


def main() -> None:
    """Print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("corpus", choices=["scale", "hotpotqa_dev", "musique_dev"])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    chunks = scale_chunks(args.chunks) if args.corpus == "scale" else eval_chunks(args.corpus)
    extraction = LexicalEntityExtractor().run(chunks=chunks)["extraction"]
    resolvers = {"without": EntityResolver(short_forms_enabled=False), "with": EntityResolver()}
    seconds: dict[str, list[float]] = {key: [] for key in resolvers}
    merges: dict[str, int] = {}
    for _ in range(args.repeat):
        for key, resolver in resolvers.items():
            took, resolution = timed(resolver, extraction)
            seconds[key].append(took)
            merges[key] = sum(d.decision == MERGED for d in resolution.decisions)
    entities = len({e.id for e in extraction.entities})
    print(f"{args.corpus}: {len(chunks)} chunks, {entities} entities")
    for key in resolvers:
        print(
            f"  {key} short forms: median {statistics.median(seconds[key]):.2f} s {seconds[key]}, {merges[key]} merges"
        )
    ratio = statistics.median(seconds["with"]) / statistics.median(seconds["without"])
    print(f"  ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
