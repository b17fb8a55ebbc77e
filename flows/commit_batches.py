"""Commit batches: the write stage cut into slices of whole documents, each written and committed on its own.

Readers in the same process wait for one batch at most, and a batch makes its documents visible all at once: its
chunks, vectors, entities, links and the resolution decisions that concern them, the retirement of its documents'
older versions, then the commit of its documents. The cut depends only on the documents (in folder order), their
chunks and one resolution, so a run killed between two batches and started again writes the remaining batches
exactly as the first run would have.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import MERGED, MergeDecision, Resolution, ResolutionCandidate
from agrag.components.stores.vector_store import CURRENT, STATUS_FIELD, VectorPoint


class NamedAfter(Collection[str]):
    """The entities that text of a later batch of the same run names: what retiring older chunks must keep.

    Without it, an entity that only a superseded version named, and that a document of a later batch names now,
    would be deleted by this batch's retirement and written again (without its vector) by the later one.
    """

    def __init__(self, last_batch: Mapping[str, int], batch: int) -> None:
        self._last_batch = last_batch
        self._batch = batch

    def __contains__(self, entity_id: object) -> bool:
        return isinstance(entity_id, str) and self._last_batch.get(entity_id, -1) > self._batch

    def __iter__(self) -> Iterator[str]:
        return (entity_id for entity_id, last in self._last_batch.items() if last > self._batch)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(frozen=True, slots=True)
class CommitBatch:
    """What one commit batch writes, in the order it is written.

    Attributes:
        documents: Whole documents (about ``ingest.write_batch_chunks`` chunks together), committed last.
        chunks: Their chunks, and ``chunk_points`` the vectors of the searchable ones.
        entities: Entities first named here (a relation endpoint counts); ``entity_points`` their new vectors.
        mentions: Links from this batch's chunks to the entities they name; ``about`` to those they are about.
        relations: Relations with the support of this batch's chunks (a relation some chunks of several batches
            support is written by each of them with its own part; the store adds support up).
        fact_points: The fact point of each of those relations (written by each batch that writes the relation, and
            settled from the graph after its commit).
        decisions: The resolution decisions whose two entities exist once this batch is written, with their
            ``positions`` in the run's list (which name their merge log lines).
        candidates: Near misses whose entities exist by now and whose merges (if any) are applied by now.
        merged: Members merged by this batch's decisions, and what they resolved into.
        keep: Entities that later batches name, which retiring this batch's older chunks must not delete.
    """

    documents: tuple[LoadedDocument, ...]
    chunks: tuple[Chunk, ...]
    chunk_points: tuple[VectorPoint, ...]
    entities: tuple[Entity, ...]
    entity_points: tuple[VectorPoint, ...]
    mentions: tuple[Mention, ...]
    about: tuple[Mention, ...]
    relations: tuple[Relation, ...]
    fact_points: tuple[VectorPoint, ...]
    decisions: tuple[MergeDecision, ...]
    positions: tuple[int, ...]
    candidates: tuple[ResolutionCandidate, ...]
    merged: dict[str, str]
    keep: Collection[str]


def document_slices(documents: Sequence[LoadedDocument], chunks: Sequence[Chunk], size: int) -> list[list[int]]:
    """Consecutive runs of whole documents (as indexes into ``documents``) holding about ``size`` chunks each."""
    counts: dict[str, int] = defaultdict(int)
    for chunk in chunks:
        counts[chunk.document_id] += 1
    slices: list[list[int]] = []
    current: list[int] = []
    held = 0
    for index, loaded in enumerate(documents):
        current.append(index)
        held += counts[loaded.document.id]
        if held >= size:
            slices.append(current)
            current, held = [], 0
    if current:
        slices.append(current)
    return slices


class _Placement:
    """Which batch each chunk, entity and merge belongs to."""

    def __init__(self, documents: Sequence[LoadedDocument], chunks: Sequence[Chunk], size: int) -> None:
        self.slices = document_slices(documents, chunks, size)
        self.of_document = {documents[i].document.id: b for b, indexes in enumerate(self.slices) for i in indexes}
        self.of_chunk = {c.id: self.of_document.get(c.document_id, 0) for c in chunks}
        self.chunks_of: dict[str, list[Chunk]] = defaultdict(list)
        for chunk in chunks:
            self.chunks_of[chunk.document_id].append(chunk)
        self.first: dict[str, int] = {}  # entity -> first batch that names it (or supports a relation on it)
        self.last_named: dict[str, int] = {}  # entity -> last batch whose chunks name it
        self.merge_batch: dict[str, int] = {}  # merged member -> batch that applies its merge

    def name(self, entity_id: str, batch: int) -> None:
        self.first[entity_id] = min(batch, self.first.get(entity_id, batch))
        self.last_named[entity_id] = max(batch, self.last_named.get(entity_id, batch))

    def at(self, entity_id: str) -> int:
        return self.first.get(entity_id, 0)


def plan_commit_batches(
    documents: Sequence[LoadedDocument],
    chunks: Sequence[Chunk],
    resolution: Resolution,
    *,
    chunk_points: Sequence[VectorPoint],
    entity_points: Sequence[VectorPoint],
    size: int,
    fact_points: Sequence[VectorPoint] = (),
) -> list[CommitBatch]:
    """Cut the write of ``documents`` into commit batches of about ``size`` chunks of whole documents.

    ``resolution`` may cover more documents than ``documents`` (a resumed run writes what an interrupted one had
    not committed, with the resolution it had journaled): only what concerns these documents' chunks is placed,
    plus decisions and candidates, which are idempotent and go where their entities exist.
    """
    if not documents:
        return []
    place = _Placement(documents, chunks, size)
    count = len(place.slices)
    extraction = resolution.extraction
    mentions = _by_batch(extraction.mentions, place, count)
    about = _by_batch(extraction.about, place, count)
    for batch, links in enumerate(zip(mentions, about, strict=True)):
        for link in (*links[0], *links[1]):
            place.name(link.entity_id, batch)
    relations = _relations_by_batch(extraction.relations, place, count)
    entities: list[list[Entity]] = [[] for _ in range(count)]
    for entity in extraction.entities:
        entities[min(place.at(entity.id), count - 1)].append(entity)
    decisions: list[list[tuple[int, MergeDecision]]] = [[] for _ in range(count)]
    for position, decision in enumerate(resolution.decisions):
        batch = min(max(place.at(decision.member_id), place.at(decision.resolved_id)), count - 1)
        decisions[batch].append((position, decision))
        if decision.decision == MERGED:
            place.merge_batch[decision.member_id] = batch
    candidates: list[list[ResolutionCandidate]] = [[] for _ in range(count)]
    for candidate in resolution.candidates:
        ends = (candidate.entity_id, candidate.other_id)
        batch = max(max(place.at(e), place.merge_batch.get(e, 0)) for e in ends)
        candidates[min(batch, count - 1)].append(candidate)
    chunk_groups = _points_by_batch(chunk_points, lambda p: place.of_document.get(str(p.payload.get("document_id")), 0))
    entity_groups = _points_by_batch(entity_points, lambda p: min(place.at(p.id), count - 1))
    facts = {p.id: p for p in fact_points}
    return [
        CommitBatch(
            documents=tuple(documents[i] for i in indexes),
            chunks=tuple(c for i in indexes for c in place.chunks_of.get(documents[i].document.id, ())),
            chunk_points=tuple(chunk_groups.get(batch, ())),
            entities=tuple(entities[batch]),
            entity_points=tuple(_unmerged_until_applied(p, batch, place) for p in entity_groups.get(batch, ())),
            mentions=tuple(mentions[batch]),
            about=tuple(about[batch]),
            relations=tuple(relations[batch]),
            fact_points=tuple(facts[i] for i in dict.fromkeys(r.id for r in relations[batch]) if i in facts),
            decisions=tuple(d for _, d in decisions[batch]),
            positions=tuple(p for p, _ in decisions[batch]),
            candidates=tuple(candidates[batch]),
            merged={d.member_id: d.resolved_id for _, d in decisions[batch] if d.decision == MERGED},
            keep=NamedAfter(place.last_named, batch),
        )
        for batch, indexes in enumerate(place.slices)
    ]


def _by_batch(links: Sequence[Mention], place: _Placement, count: int) -> list[list[Mention]]:
    """Links by the batch of their chunk; links of other chunks (committed by an interrupted run) are left out."""
    grouped: list[list[Mention]] = [[] for _ in range(count)]
    for link in links:
        batch = place.of_chunk.get(link.chunk_id)
        if batch is not None:
            grouped[batch].append(link)
    return grouped


def _relations_by_batch(relations: Sequence[Relation], place: _Placement, count: int) -> list[list[Relation]]:
    """Each relation split by the batches of its supporting chunks; its endpoints count as named there."""
    grouped: list[list[Relation]] = [[] for _ in range(count)]
    unsupported: list[Relation] = []
    for relation in relations:
        parts: dict[int, list[str]] = {}
        unknown: list[str] = []
        for chunk_id in relation.chunk_ids:
            if chunk_id in place.of_chunk:
                parts.setdefault(place.of_chunk[chunk_id], []).append(chunk_id)
            else:
                unknown.append(chunk_id)
        if not parts:
            unsupported.append(relation)
            continue
        whole = len(parts) == 1 and not unknown  # then the relation itself, not a copy: millions of them in a bulk load
        for index, (batch, chunk_ids) in enumerate(sorted(parts.items())):
            support = chunk_ids + unknown if index == 0 else chunk_ids
            grouped[batch].append(relation if whole else replace(relation, chunk_ids=tuple(support)))
            for end in (relation.source_id, relation.target_id):
                place.first[end] = min(batch, place.first.get(end, batch))
    for relation in unsupported:  # no chunk of these documents: written once both ends exist
        grouped[min(max(place.at(relation.source_id), place.at(relation.target_id)), count - 1)].append(relation)
    return grouped


def _points_by_batch(
    points: Sequence[VectorPoint], batch_of: Callable[[VectorPoint], int]
) -> dict[int, list[VectorPoint]]:
    grouped: dict[int, list[VectorPoint]] = defaultdict(list)
    for point in points:
        grouped[batch_of(point)].append(point)
    return grouped


def _unmerged_until_applied(point: VectorPoint, batch: int, place: _Placement) -> VectorPoint:
    """A member's vector is written searchable until the batch that applies its merge marks it merged."""
    if place.merge_batch.get(point.id, batch) > batch and point.payload.get(STATUS_FIELD) != CURRENT:
        return replace(point, payload={**point.payload, STATUS_FIELD: CURRENT})
    return point
