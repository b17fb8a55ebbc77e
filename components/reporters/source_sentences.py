"""The sources' sentences as community evidence: chunks split into sentences, and the entities each names.

Also how a community's sentences are ranked (``gather_evidence``); the rules are ``ExtractiveCommunityReporter``'s.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from agrag.components.data_models.chunk import TABLE_CHUNK, Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.relation import Relation

_WORD = re.compile(r"\w+")
_HEADING = re.compile(r"^[ \t]*#{1,6}(?:[ \t]|$)")
_TABLE_DELIMITER = re.compile(r"^[ \t|:-]*-[ \t|:-]*$")  # |---|:--:| and horizontal rules
_BLOCK_START = re.compile(r"^[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|\|)")  # a list item or a table row
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_LEADING_MARKUP = re.compile(r"^(?:\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|\|))+\s*")
_TRAILING_MARKUP = re.compile(r"\s*\|\s*$")
_MIN_SENTENCE_WORDS = 3
_MAX_NAME_WORDS = 8


@dataclass(frozen=True, slots=True)
class CommunityEvidence:
    """What the sources say about one community, most central first; the material of every kind of report.

    Attributes:
        community: The community.
        members: Its known member entities, most central first.
        centrality: Weighted degree of each member inside the community, by entity id.
        relations: Relations between two members, heaviest (most supporting chunks) first.
        weight: Total weight of those relations.
        sentences: Source sentences that name members, most representative first, each once.
        sentence_members: The members each sentence names (aligned with ``sentences``).
    """

    community: Community
    members: tuple[Entity, ...]
    centrality: Mapping[str, float]
    relations: tuple[Relation, ...]
    weight: float
    sentences: tuple[str, ...]
    sentence_members: tuple[frozenset[str], ...]

    def best_sentence(self, entity_id: str, avoid: Iterable[str] = ()) -> str | None:
        """The most representative sentence naming this member, one not in ``avoid`` if there is one."""
        naming = [s for s, named in zip(self.sentences, self.sentence_members, strict=True) if entity_id in named]
        avoided = set(avoid)
        return next((s for s in naming if s not in avoided), naming[0] if naming else None)


def split_sentences(text: str, *, rows: bool = False) -> list[str]:
    """Split Markdown text into sentences, each an exact substring of ``text`` without its list or table markup.

    Paragraphs, list items and table rows are split apart first; headings, table delimiter lines and fragments of
    fewer than three words are skipped. Inside a paragraph a sentence ends at ``.``, ``!`` or ``?`` followed by
    white space and a capital or a digit; line breaks inside a sentence are kept.

    Args:
        text: The text.
        rows: Every line is a block of its own (for a table chunk, such as the rows of a CSV file).
    """
    sentences: list[str] = []
    for block in _blocks(text, rows=rows):
        for piece in _SENTENCE_END.split(block):
            sentence = _TRAILING_MARKUP.sub("", _LEADING_MARKUP.sub("", piece)).strip()
            if len(_WORD.findall(sentence)) >= _MIN_SENTENCE_WORDS:
                sentences.append(sentence)
    return sentences


def _blocks(text: str, *, rows: bool) -> list[str]:
    """Paragraphs, list items and table rows of ``text``, each a contiguous slice of it."""
    blocks: list[str] = []
    current: list[str] = []
    for line in text.splitlines(keepends=True):
        skip = not line.strip() or _HEADING.match(line) or _TABLE_DELIMITER.match(line)
        if current and (skip or _BLOCK_START.match(line)):
            blocks.append("".join(current))
            current = []
        if skip:
            continue
        current.append(line)
        if rows or line.lstrip().startswith("|"):  # a table row is one line
            blocks.append("".join(current))
            current = []
    if current:
        blocks.append("".join(current))
    return [block.strip() for block in blocks]


def _name_key(words: Sequence[str]) -> str:
    return " ".join(words)


class SourceIndex:
    """The entities, relations and chunks of one run, indexed for evidence gathering."""

    def __init__(
        self,
        entities: Sequence[Entity],
        relations: Sequence[Relation],
        chunks: Sequence[Chunk],
        mentions: Sequence[tuple[str, str]],
        names: Sequence[tuple[str, str]] | None = None,
    ) -> None:
        self.entities = {e.id: e for e in entities}
        self.chunk_position = {c.id: i for i, c in enumerate(chunks)}
        self.chunks = {c.id: c for c in chunks}
        self.relations_of: dict[str, list[Relation]] = defaultdict(list)
        self.chunks_of: dict[str, set[str]] = defaultdict(set)
        for chunk_id, entity_id in mentions:
            self.chunks_of[entity_id].add(chunk_id)
        for rel in relations:
            self.relations_of[rel.source_id].append(rel)
            if rel.target_id != rel.source_id:
                self.relations_of[rel.target_id].append(rel)
            self.chunks_of[rel.source_id].update(rel.chunk_ids)
            self.chunks_of[rel.target_id].update(rel.chunk_ids)
        self.names: dict[str, list[str]] = defaultdict(list)  # normalized name -> entity ids
        self.first_words: set[str] = set()  # so that most words of a sentence cost one set lookup
        self.max_words = 0
        for name, entity_id in [(e.name, e.id) for e in entities] if names is None else names:
            if words := _WORD.findall(name.casefold())[:_MAX_NAME_WORDS]:
                self.names[_name_key(words)].append(entity_id)
                self.first_words.add(words[0])
                self.max_words = max(self.max_words, len(words))
        self._sentences: dict[str, list[tuple[str, frozenset[str]]]] = {}

    def chunk_ids_naming(self, community: Community) -> set[str]:
        """The ids of the given chunks that mention a member of ``community`` or support one of its relations."""
        return {c for eid in community.entity_ids for c in self.chunks_of.get(eid, ()) if c in self.chunks}

    def sentences(self, chunk_id: str) -> list[tuple[str, frozenset[str]]]:
        """The sentences of a chunk, each with the entities it names (cached: a chunk serves several communities)."""
        if (cached := self._sentences.get(chunk_id)) is None:
            chunk = self.chunks[chunk_id]
            cached = [(s, self.named(s)) for s in split_sentences(chunk.text, rows=chunk.kind == TABLE_CHUNK)]
            self._sentences[chunk_id] = cached
        return cached

    def named(self, sentence: str) -> frozenset[str]:
        """Entities whose names the sentence contains, as whole words, case-insensitively, longest name first."""
        words = _WORD.findall(sentence.casefold())
        named: set[str] = set()
        i = 0
        while i < len(words):
            step = 1
            if words[i] in self.first_words:
                for n in range(min(self.max_words, len(words) - i), 0, -1):
                    if ids := self.names.get(_name_key(words[i : i + n])):
                        named.update(ids)
                        step = n
                        break
            i += step
        return frozenset(named)


@dataclass(frozen=True, slots=True)
class CommunityStructure:
    """A community's members and internal relations, before any sentence is read.

    Attributes:
        members: ``set`` of its member ids (a set, so that ``named & members`` iterates as it always has).
        known: Its known member entities, most central first.
        centrality: Weighted degree of each member inside the community, by entity id.
        relations: Relations between two members, heaviest first.
        weight: Total weight of those relations.
    """

    members: set[str]
    known: tuple[Entity, ...]
    centrality: dict[str, float]
    relations: tuple[Relation, ...]
    weight: float

    def score(self, inside: frozenset[str]) -> float:
        """A sentence's score: each member it names counts ``1 + its centrality``."""
        return sum(1.0 + self.centrality[eid] for eid in inside)


def community_structure(community: Community, index: SourceIndex) -> CommunityStructure:
    """The members, centrality and internal relations of ``community`` (see ``ExtractiveCommunityReporter``)."""
    members = set(community.entity_ids)
    relations = {
        rel.id: rel
        for eid in community.entity_ids
        for rel in index.relations_of.get(eid, ())
        if rel.source_id != rel.target_id and rel.source_id in members and rel.target_id in members
    }
    # A relation weighs as many chunks as support it; one without recorded support still counts once.
    weight_of = {rid: float(max(1, len(set(rel.chunk_ids)))) for rid, rel in relations.items()}
    centrality = dict.fromkeys(community.entity_ids, 0.0)
    for rid, rel in relations.items():
        centrality[rel.source_id] += weight_of[rid]
        centrality[rel.target_id] += weight_of[rid]
    known = [index.entities[eid] for eid in community.entity_ids if eid in index.entities]
    known.sort(key=lambda e: (-centrality[e.id], -len(index.chunks_of.get(e.id, ())), e.name.casefold(), e.id))
    ranked_relations = sorted(relations.values(), key=lambda r: (-weight_of[r.id], r.id))
    return CommunityStructure(members, tuple(known), centrality, tuple(ranked_relations), math.fsum(weight_of.values()))


def sentence_key(sentence: str) -> str:
    """What two copies of a sentence share: its words, single-spaced and case-folded."""
    return " ".join(sentence.split()).casefold()


def _gather(community: Community, index: SourceIndex) -> CommunityEvidence:
    structure = community_structure(community, index)
    members = structure.members
    scored: list[tuple[float, int, int, str, frozenset[str]]] = []
    for cid in index.chunk_ids_naming(community):
        for order, (sentence, named) in enumerate(index.sentences(cid)):
            if inside := named & members:
                scored.append((-structure.score(inside), index.chunk_position[cid], order, sentence, inside))
    scored.sort(key=lambda row: row[:3])
    seen: set[str] = set()
    kept: list[tuple[str, frozenset[str]]] = []
    for *_, sentence, inside in scored:
        if (key := sentence_key(sentence)) not in seen:
            seen.add(key)
            kept.append((sentence, inside))
    return CommunityEvidence(
        community=community,
        members=structure.known,
        centrality=structure.centrality,
        relations=structure.relations,
        weight=structure.weight,
        sentences=tuple(s for s, _ in kept),
        sentence_members=tuple(named for _, named in kept),
    )


def gather_evidence(
    communities: Sequence[Community],
    entities: Sequence[Entity],
    relations: Sequence[Relation],
    chunks: Sequence[Chunk],
    mentions: Sequence[tuple[str, str]],
    *,
    names: Sequence[tuple[str, str]] | None = None,
) -> list[CommunityEvidence]:
    """Gather the evidence of each community (in the same order); see ``ExtractiveCommunityReporter`` for the rules.

    ``names``: the (name, entity id) pairs a sentence is read for (longest name first); default: ``entities``'.
    """
    index = SourceIndex(entities, relations, chunks, mentions, names)
    return [_gather(community, index) for community in communities]
