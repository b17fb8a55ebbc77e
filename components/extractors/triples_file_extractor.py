"""``TriplesFileExtractor``: entities and relations read from a file of precomputed extractions."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haystack import component

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity, entity_id_for, normalize_name
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.errors import IngestError
from agrag.components.extractors.lexical_entity_extractor import topic_links
from agrag.components.extractors.verb_phrases import written_predicate

ENTITY_LABEL = "Entity"
_MAX_TYPE = 48
_SPACE = re.compile(r"\s+")


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


@dataclass(frozen=True, slots=True)
class _Passage:
    text: str
    title: str
    entities: tuple[str, ...]
    triples: tuple[tuple[str, str, str], ...]


def _read(path: Path) -> list[_Passage]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        docs = data["docs"] if isinstance(data, dict) else data
        passages = []
        for doc in docs:
            triples = tuple((str(t[0]), str(t[1]), str(t[2])) for t in doc.get("extracted_triples", ()) if len(t) == 3)
            names = {str(e) for e in doc.get("extracted_entities", ())} | {t[i] for t in triples for i in (0, 2)}
            text = str(doc["passage"])
            passages.append(
                _Passage(text, text.split("\n", 1)[0], tuple(sorted(n for n in names if n.strip())), triples)
            )
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise IngestError(
            f"Cannot read the triples file {path}: {exc}. It must be JSON: "
            '{"docs": [{"passage": "title\\ntext", "extracted_entities": [...], "extracted_triples": [[s, p, o]]}]}.'
        ) from exc
    return passages


@component
class TriplesFileExtractor:
    """Imports entities and ``(subject, predicate, object)`` triples extracted elsewhere, e.g. by an LLM.

    Each passage of the file is matched to the chunks whose text it contains (same first line, the chunk's text
    inside the passage's). A chunk gets a mention of every entity its text names; entities and triples that no
    single chunk names go to the first chunk of the passage. Triples that one chunk's text supports cite that chunk.
    Chunks that match no passage get nothing and are counted in ``unmatched_chunks``.

    Usage:
        ```python
        extraction = TriplesFileExtractor("openie.json").run(chunks=chunks)["extraction"]
        ```
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._by_title: dict[str, list[_Passage]] | None = None

    def _index(self) -> dict[str, list[_Passage]]:
        if self._by_title is None:
            by_title: dict[str, list[_Passage]] = defaultdict(list)
            for passage in _read(Path(self.path).expanduser()):
                by_title[_flat(passage.title)].append(passage)
            self._by_title = dict(by_title)
        return self._by_title

    def _passage_of(self, chunk: Chunk) -> _Passage | None:
        body = _flat(chunk.text)
        candidates = self._index().get(_flat(chunk.title), [])
        return next((p for p in candidates if body in _flat(p.text)), None)

    @component.output_types(extraction=Extraction, unmatched_chunks=int)
    def run(self, chunks: list[Chunk]) -> dict[str, Any]:
        """Extract from a batch of chunks by looking their passages up in the file."""
        groups: dict[int, tuple[_Passage, list[Chunk]]] = {}
        unmatched = 0
        for chunk in chunks:
            passage = self._passage_of(chunk)
            if passage is None:
                unmatched += 1
                continue
            groups.setdefault(id(passage), (passage, []))[1].append(chunk)
        entities: list[Entity] = []
        mentions: list[Mention] = []
        relations: list[Relation] = []
        for passage, members in groups.values():
            self._extract(passage, members, entities, mentions, relations)
        about: list[Mention] = []
        for chunk in chunks:  # the graph layer is the same whatever extracted the entities: chunks are about titles
            topics, links = topic_links(chunk)
            entities.extend(topics)
            about.extend(links)
        extraction = Extraction(tuple(entities), tuple(mentions), tuple(relations), tuple(about))
        return {"extraction": extraction, "unmatched_chunks": unmatched}

    @staticmethod
    def _extract(
        passage: _Passage,
        chunks: list[Chunk],
        entities: list[Entity],
        mentions: list[Mention],
        relations: list[Relation],
    ) -> None:
        texts = [(chunk, _flat(chunk.text)) for chunk in chunks]

        def home(*names: str) -> list[Chunk]:
            found = [c for c, text in texts if all(_flat(n) in text for n in names)]
            return found or [chunks[0]]

        for name in passage.entities:
            if not normalize_name(name):
                continue
            entity_id = entity_id_for(name)
            entities.append(Entity(entity_id, name.strip(), ENTITY_LABEL, passage.title))
            mentions.extend(Mention(c.id, entity_id, 1) for c in home(name))
        for subject, predicate, obj in passage.triples:
            source, target = entity_id_for(subject), entity_id_for(obj)
            if not normalize_name(subject) or not normalize_name(obj) or source == target:
                continue
            written = written_predicate(predicate, _MAX_TYPE)
            kind = written.phrase
            if not written.subject_first:  # "published by": the object published the subject
                source, target = target, source
            relations.append(
                Relation(
                    relation_id_for(source, target, kind),
                    source,
                    target,
                    kind,
                    tuple(c.id for c in home(subject, obj)[:1]),
                    f"{subject} {predicate} {obj}",
                )
            )
