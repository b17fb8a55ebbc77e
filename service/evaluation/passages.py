"""Turns one search's ranked results into ranked passage lists: strict (passage hits) and expanded.

The strict list counts chunks, and the passages a fact carries (a fact result is cited through the chunks that state
it, which come with it, best first): a chunk stands for the passage it was cut from. The expanded list (a diagnostic)
also maps the other item kinds onto passages, so recipes that return graph items can be compared:

* an entity: the passages about it, then those mentioning it most (``GraphStore.supporting_chunk_ids``);
* a relation: the passages its ``chunk_ids`` name, in stored order;
* a community (with its report): the passages about or mentioning its member entities, those covering the most
  members first (ties: the passage nearest the top of a member's support list, then the corpus order), so a
  report stands for the passages that hold most of the community it summarises;
* a text2cypher row: nothing, since its values are computed by a graph query, not read from a passage.

Both lists walk the results best first; a passage counts once, where it first appears.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from agrag.components.data_models.chunk import Chunk, document_id_of
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.search_result import SearchResult

Support = Mapping[str, Sequence[str]]  # entity id → its supporting chunk ids, best first


def entities_to_support(results: Sequence[SearchResult]) -> list[str]:
    """The entity ids whose supporting passages the expanded list needs: entity hits and community members."""
    ids: dict[str, None] = {}
    for result in results:
        item = result.item
        if isinstance(item, Entity):
            ids[item.id] = None
        elif isinstance(item, Community):
            ids.update(dict.fromkeys(item.entity_ids))
    return list(ids)


def community_passages(community: Community, support: Support, index: Mapping[str, int]) -> list[int]:
    """The passages of a community's members: most members covered first, then best support rank, then index."""
    members: dict[int, set[str]] = {}
    best_rank: dict[int, int] = {}
    for entity_id in community.entity_ids:
        for rank, chunk_id in enumerate(support.get(entity_id, ())):
            passage = index.get(document_id_of(chunk_id))
            if passage is None:
                continue
            members.setdefault(passage, set()).add(entity_id)
            best_rank[passage] = min(rank, best_rank.get(passage, rank))
    return sorted(members, key=lambda p: (-len(members[p]), best_rank[p], p))


def _item_passages(result: SearchResult, support: Support, index: Mapping[str, int]) -> list[int]:
    item = result.item
    if isinstance(item, Community):
        return community_passages(item, support, index)
    if isinstance(item, Chunk):
        chunk_ids: Sequence[str] = (item.id,)
    elif isinstance(item, Entity):
        chunk_ids = support.get(item.id, ())
    elif isinstance(item, Relation | Fact):
        chunk_ids = item.chunk_ids
    else:  # CypherRow: computed values, no passage
        chunk_ids = ()
    passages = (index.get(document_id_of(chunk_id)) for chunk_id in chunk_ids)
    return [p for p in passages if p is not None]


def ranked_passages(
    results: Sequence[SearchResult], index: Mapping[str, int], support: Support
) -> tuple[list[int], list[int]]:
    """Walk ``results`` best first and return (strict, expanded) passage indexes, each passage once.

    Args:
        results: One search's results, best first.
        index: Document id → corpus index.
        support: Supporting chunk ids of the entities ``entities_to_support`` names.
    """
    strict: dict[int, None] = {}
    expanded: dict[int, None] = {}
    for result in results:
        passages = _item_passages(result, support, index)
        if isinstance(result.item, Chunk | Fact):
            strict.update(dict.fromkeys(passages))
        expanded.update(dict.fromkeys(passages))
    return list(strict), list(expanded)


def evidence_passages(evidence_ids: Iterable[str], index: Mapping[str, int]) -> list[int]:
    """The corpus indexes of the passages ``evidence_ids`` point into, in order, each passage once."""
    found: dict[int, None] = {}
    for evidence_id in evidence_ids:
        passage = index.get(EvidenceId.parse(evidence_id).document_id)
        if passage is not None:
            found[passage] = None
    return list(found)
