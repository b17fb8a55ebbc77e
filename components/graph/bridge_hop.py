"""``BridgeHop``: the second round of a bridge question, from the best passages through the names they share."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agrag.components import defaults
from agrag.components.graph.passage_graph import PassageGraph

# Cosine similarities of one vector to the chunks among the given ids (the chunk store's, inside the search's filter).
Similarities = Callable[[Sequence[float], Sequence[str]], Mapping[str, float]]
# The stored vectors of the given entity ids (those without one are left out).
EntityVectors = Callable[[Sequence[str]], Mapping[str, Sequence[float]]]
# The chunks among the given ids that share words with the question, best keyword match (BM25) first.
KeywordOrder = Callable[[Sequence[str]], Sequence[str]]


@dataclass(frozen=True, slots=True)
class BridgeHopSettings:
    """How far the second round reaches.

    Attributes:
        first: Passages of the first round whose names may bridge to the answer.
        max_bridges: Names tried as bridges, the most specific first.
        max_share: A name on more than this share of the passages is a hub, never a bridge.
        entity_weight: How much of the bridge entity's vector joins the question's in the second round.
        seed_passages: A question that names no entity of the graph starts its walk from the entities of this many
            of the passages that match it best (0: it is ranked by similarity alone).
    """

    first: int = defaults.BRIDGE_FIRST
    max_bridges: int = defaults.BRIDGE_MAX_BRIDGES
    max_share: float = defaults.BRIDGE_MAX_SHARE
    entity_weight: float = defaults.BRIDGE_ENTITY_WEIGHT
    seed_passages: int = defaults.BRIDGE_SEED_PASSAGES


@dataclass(frozen=True, slots=True)
class Bridge:
    """A name of a first-round passage that leads to other passages: the entity, its weight and those passages."""

    entity_id: str
    weight: float
    chunk_ids: tuple[str, ...]


class BridgeHop:
    """Finds the passages a bridge question needs second: those naming an entity of the best first passages.

    A question such as "Which funder pays for the project whose samples were spoiled in August 2024?" finds the
    incident report first; the report names the project (the bridge), and the passage that answers names the project
    too, but shares few words with the question. For each specific entity of the first-round passages that the
    question itself does not name (not a hub, named by at least one other passage), the passages naming it are scored
    by their similarity to the question's vector joined with the entity's (``q + w * e``, normalised): the question
    asked again about the bridge, with no model call. Bridges are tried most specific first, weighted by how strongly
    the first round's facts tie them to the question when a weight is given.

    Usage:
        ```python
        hop = BridgeHop(BridgeHopSettings())
        second = hop.rank(graph, ["doc1#0"], seeds, query_vector, chunk_store_similarities, entity_vectors)
        ```
    """

    def __init__(self, settings: BridgeHopSettings | None = None) -> None:
        self.settings = settings or BridgeHopSettings()

    def passage_seeds(self, graph: PassageGraph, best: Sequence[str]) -> list[str]:
        """The entities of the first ``seed_passages`` of ``best`` (passages, best match first), in order, each once.

        Where a question names nothing ("Who supervises the student who ran the porpoise tent?"), the names of the
        passages that match it best are where its chain starts.
        """
        seeds: dict[str, None] = {}
        for chunk_id in best[: self.settings.seed_passages]:
            seeds.update(dict.fromkeys(graph.entities_of(chunk_id)))
        return list(seeds)

    def bridges(
        self,
        graph: PassageGraph,
        first: Sequence[str],
        named: Sequence[str],
        weights: Mapping[str, float] | None = None,
    ) -> list[Bridge]:
        """The bridge entities of the ``first`` passages, strongest first; ``named`` are the question's own entities."""
        limit = max(2, int(self.settings.max_share * len(graph.chunk_ids)))
        skip, first_set = set(named), set(first)
        found: dict[str, Bridge] = {}
        for chunk_id in first:
            for entity_id in graph.entities_of(chunk_id):
                if entity_id in skip or entity_id in found:
                    continue
                chunks = graph.chunks_of(entity_id)
                others = tuple(c for c in chunks if c not in first_set)
                if not others or len(chunks) > limit:
                    continue
                specificity = 1.0 / len(chunks)
                weight = specificity * (1.0 + (weights or {}).get(entity_id, 0.0))
                found[entity_id] = Bridge(entity_id, weight, others)
        ranked = sorted(found.values(), key=lambda b: (-b.weight, b.entity_id))
        return ranked[: self.settings.max_bridges]

    def rank(
        self,
        bridges: Sequence[Bridge],
        query: Sequence[float],
        similarities: Similarities,
        entity_vectors: EntityVectors,
        keywords: KeywordOrder | None = None,
    ) -> list[str]:
        """Passages reached through ``bridges``, best first.

        Each is scored by its best bridge's joined question; with ``keywords``, that order is fused (RRF) with the
        passages' keyword match to the question itself: the answering passage often shares the question's one telling
        word ("Funder: ...") and little of its meaning.
        """
        vectors = entity_vectors([b.entity_id for b in bridges])
        q = np.asarray(query, dtype=np.float64)
        best: dict[str, float] = {}
        for bridge in bridges:
            vector = vectors.get(bridge.entity_id)
            if vector is None:
                continue
            joined = q + self.settings.entity_weight * np.asarray(vector, dtype=np.float64)
            norm = float(np.linalg.norm(joined))
            if norm == 0.0:
                continue
            for chunk_id, cosine in similarities((joined / norm).tolist(), bridge.chunk_ids).items():
                best[chunk_id] = max(best.get(chunk_id, -1.0), cosine)
        dense = sorted(best, key=lambda chunk_id: (-best[chunk_id], chunk_id))
        if keywords is None or not dense:
            return dense
        fused = {c: 1.0 / (defaults.BRIDGE_KEYWORD_RRF_K + rank) for rank, c in enumerate(dense)}
        for rank, chunk_id in enumerate(keywords(dense)):
            if chunk_id in fused:
                fused[chunk_id] += defaults.BRIDGE_KEYWORD_WEIGHT / (defaults.BRIDGE_KEYWORD_RRF_K + rank)
        return sorted(fused, key=lambda chunk_id: (-fused[chunk_id], chunk_id))
