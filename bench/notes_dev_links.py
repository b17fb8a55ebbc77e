"""Mention linking on an eval set: the lexical extractor and the resolver, without and with the short-form step.

Each note is one document, ``title + "\\n" + text`` (as ``agrag eval`` ingests it), chunked by the structural
chunker; the resolver runs offline (fuzzy, acronyms, short forms; no embeddings, no LLM). Prints, as Markdown, the
entity counts before and after the short-form step, then every short-form merge and kept-apart decision with the
sentences naming the short form, for a hand check (``bench/labels/notes_dev_links_check.md``); with ``--brief``,
one line per decision; with ``--sample N``, N merges drawn at random. ``--persons FILE`` gives the entities named
in FILE (one name a line) the ``Person`` label first, as a typer would (``bench/labels/notes_dev_persons.txt`` lists
notes_dev's people).

    .venv/bin/python bench/notes_dev_links.py [notes_dev|hotpotqa_dev|musique_dev] [--brief] [--sample N]
        [--persons FILE]
"""

from __future__ import annotations

import argparse
import os
import random
import re
from dataclasses import replace
from pathlib import Path

from agrag.components.chunkers.structural_chunker import StructuralChunker
from agrag.components.data_models.chunk import Chunk, document_id_of
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.resolution import MERGED, Resolution, ResolutionRule
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.resolvers.entity_resolver import EntityResolver
from agrag.service.evaluation.converters import CONVERTERS, load_named
from agrag.service.evaluation.dataset import EvalDataset, load_generic

CONTEXT = 90  # characters either side of a mention


def dataset(name: str, bench: Path) -> EvalDataset:
    """A named eval set of ``bench``: ``hotpotqa_dev``, ``musique_dev`` or a folder of corpus and questions JSON."""
    if name in CONVERTERS:
        return load_named(name, bench)
    return load_generic(bench / name / "corpus.json", bench / name / "questions.json", name)


def passage_chunks(data: EvalDataset) -> list[Chunk]:
    """The passages as documents ``000000`` ... titled by their first line, chunked as ingestion chunks them."""
    loaded = []
    for index, passage in enumerate(data.corpus):
        name = f"{index:06d}"
        document = Document(id=name, version="v1", title=passage.title, source_path=f"{name}.txt")
        loaded.append(LoadedDocument(document, passage.document_text))
    return [c for c in StructuralChunker().run(documents=loaded)["chunks"] if c.searchable]


def typed(extraction: Extraction, persons: set[str]) -> Extraction:
    """The extraction with the entities named in ``persons`` labelled ``Person`` (their ids follow the label)."""
    ids = {e.id: entity_id_for(e.name, "Person") for e in extraction.entities if e.name in persons}

    def move(links: tuple[Mention, ...]) -> tuple[Mention, ...]:
        return tuple(Mention(m.chunk_id, ids.get(m.entity_id, m.entity_id), m.count) for m in links)

    entities = tuple(
        Entity(ids[e.id], e.name, "Person", e.description) if e.id in ids else e for e in extraction.entities
    )
    relations = tuple(
        replace(r, source_id=ids.get(r.source_id, r.source_id), target_id=ids.get(r.target_id, r.target_id))
        for r in extraction.relations
    )
    return Extraction(entities, move(extraction.mentions), relations, move(extraction.about))


def canonical(resolution: Resolution) -> int:
    """Entities left once the merges are applied."""
    merged = {d.member_id for d in resolution.decisions if d.decision == MERGED}
    return len({e.id for e in resolution.extraction.entities} - merged)


_BEFORE, _AFTER = re.compile(r"[A-Z][\w'’.-]* $"), re.compile(r"^ [A-Z]")  # a capitalized word there: a longer name


def contexts(name: str, chunks: list[Chunk]) -> list[str]:
    """Where ``name`` is written on its own (not inside a longer name), by document: ``000012: ...context...``."""
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    found = []
    for chunk in chunks:
        for match in pattern.finditer(chunk.text):
            before, after = chunk.text[max(0, match.start() - 30) : match.start()], chunk.text[match.end() :][:2]
            if _BEFORE.search(before) or _AFTER.search(after):
                continue
            start, end = max(0, match.start() - CONTEXT), match.end() + CONTEXT
            text = " ".join(chunk.text[start:end].split())
            found.append(f"{document_id_of(chunk.id)}: ...{text}...")
    return found


def main() -> None:
    """Print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("dataset", nargs="?", default="notes_dev")
    parser.add_argument("--brief", action="store_true", help="one line per decision, no contexts")
    parser.add_argument("--persons", type=Path, help="names to label Person first, one a line (# comments)")
    parser.add_argument("--sample", type=int, help="only this many short-form merges, drawn at random (seed 44)")
    args = parser.parse_args()
    bench = Path(os.environ.get("AGRAG_EVAL_BENCH_DIR", "../shared/bench"))
    chunks = passage_chunks(dataset(args.dataset, bench))
    extraction = LexicalEntityExtractor().run(chunks=chunks)["extraction"]
    if args.persons:
        lines = args.persons.read_text(encoding="utf-8").splitlines()
        extraction = typed(extraction, {n.strip() for n in lines if n.strip() and not n.startswith("#")})
    before = EntityResolver(short_forms_enabled=False).run(extraction=extraction)["resolution"]
    after = EntityResolver().run(extraction=extraction)["resolution"]
    names = {e.id: e.name for e in after.extraction.entities}
    print(f"# Mention linking on {args.dataset}{' with Person labels' if args.persons else ''}\n")
    print(f"{len(chunks)} chunks; {len(after.extraction.entities)} entities after exact merging; ")
    print(f"{canonical(before)} entities without the short-form step, {canonical(after)} with it.\n")
    short = [d for d in after.decisions if d.rule == ResolutionRule.SHORT_FORM]
    if args.sample:
        short = random.Random(44).sample([d for d in short if d.decision == MERGED], args.sample)
    for decision in short:
        member, target = names[decision.member_id], names[decision.resolved_id]
        if args.brief:
            print(f"- {decision.decision}: {member} -> {target} ({decision.score}): {decision.reason}")
            continue
        print(f"## {decision.decision}: {member} -> {target} (score {decision.score})\n")
        print(f"{decision.reason}\n")
        for line in contexts(member, chunks):
            print(f"- {line}")
        print()
    others = [d for d in after.decisions if d.rule != ResolutionRule.SHORT_FORM]
    print(f"Other decisions: {len(others)}; near misses: {len(after.candidates)}.")


if __name__ == "__main__":
    main()
