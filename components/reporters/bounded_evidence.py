"""Community evidence that keeps only the sentences an extractive report can use, read one chunk at a time.

``gather_evidence`` ranks every sentence of every chunk naming a member, for every community at once, and caches
each chunk's sentences because a chunk serves several communities: at 100,000 chunks that held about 1 GB, and at
1,000,000 the reports stage ran out of this machine's 24 GB. An extractive report reads only the first
``summary`` sentences and, for each of its first ``findings`` members, the first ``findings`` sentences naming it
(``CommunityEvidence.best_sentence`` avoids at most ``findings - 1``), so ``bounded_evidence`` walks the chunks once,
in their order, and keeps for each community only those: the same reports, in memory bounded by the communities.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from agrag.components.data_models.chunk import TABLE_CHUNK
from agrag.components.data_models.community import Community
from agrag.components.reporters.source_sentences import (
    CommunityEvidence,
    CommunityStructure,
    SourceIndex,
    community_structure,
    sentence_key,
    split_sentences,
)

# (score, -chunk position, -order, sentence, key, members named): the heap's first entry is the worst kept.
_Entry = tuple[float, int, int, str, str, frozenset[str]]


@dataclass(slots=True)
class _Best:
    """The best ``limit`` distinct sentences offered, by score, then chunk position, then order in the chunk.

    Sentences are offered in chunk position and order, and a sentence's score depends only on its words (its key),
    so the first copy of a key is its best: a later copy is dropped, and a key dropped for being worse than the
    ``limit`` kept stays worse than them.
    """

    limit: int
    heap: list[_Entry] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)

    def offer(self, entry: _Entry) -> None:
        if len(self.heap) >= self.limit and entry[:3] <= self.heap[0][:3]:
            return
        if entry[4] in self.keys:
            return
        self.keys.add(entry[4])
        if len(self.heap) < self.limit:
            heapq.heappush(self.heap, entry)
        else:
            self.keys.discard(heapq.heapreplace(self.heap, entry)[4])


@dataclass(slots=True)
class _Collector:
    """One community's structure and its best sentences overall and per leading member."""

    structure: CommunityStructure
    overall: _Best
    by_member: dict[str, _Best]

    def offer(self, sentence: str, key: str, named: frozenset[str], position: int, order: int) -> None:
        if not (inside := named & self.structure.members):
            return
        entry = (self.structure.score(inside), -position, -order, sentence, key, inside)
        self.overall.offer(entry)
        for member in inside & self.by_member.keys():
            self.by_member[member].offer(entry)

    def evidence(self, community: Community) -> CommunityEvidence:
        entries = {e[4]: e for best in (self.overall, *self.by_member.values()) for e in best.heap}
        ranked = sorted(entries.values(), key=lambda e: (-e[0], -e[1], -e[2]))
        return CommunityEvidence(
            community=community,
            members=self.structure.known,
            centrality=self.structure.centrality,
            relations=self.structure.relations,
            weight=self.structure.weight,
            sentences=tuple(e[3] for e in ranked),
            sentence_members=tuple(e[5] for e in ranked),
        )


def bounded_evidence(
    communities: Sequence[Community], index: SourceIndex, *, summary: int, findings: int
) -> list[CommunityEvidence]:
    """Each community's evidence with only the sentences its extractive report reads, in the same order.

    Equal to ``gather_evidence``'s for the report (``ExtractiveCommunityReporter.report`` with these ``summary``
    sentences and ``findings``): its ``sentences`` are the first ``summary`` of the full ranking, then, in ranking
    order, the first ``findings`` naming each of the first ``findings`` members.
    """
    collectors = []
    serving: dict[str, list[int]] = defaultdict(list)  # chunk id -> the communities it may give sentences to
    for number, community in enumerate(communities):
        structure = community_structure(community, index)
        leading = {e.id: _Best(findings) for e in structure.known[:findings]}
        collectors.append(_Collector(structure, _Best(summary), leading))
        for chunk_id in index.chunk_ids_naming(community):
            serving[chunk_id].append(number)
    for chunk_id, position in sorted(index.chunk_position.items(), key=lambda item: item[1]):
        if not (takers := serving.pop(chunk_id, None)):
            continue
        chunk = index.chunks[chunk_id]
        for order, sentence in enumerate(split_sentences(chunk.text, rows=chunk.kind == TABLE_CHUNK)):
            if named := index.named(sentence):
                key = sentence_key(sentence)
                for number in takers:
                    collectors[number].offer(sentence, key, named, position, order)
    return [collector.evidence(community) for collector, community in zip(collectors, communities, strict=True)]
