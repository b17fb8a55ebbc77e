"""What every offline recipe and both keyword and dense legs answer on an open runtime, compared across two stores.

Used where the same data dir is searched through two storage layouts (an Edge shard migrated to a server, a shard
indexed for search): the answers must not change.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.vector_store import QueryLeg
from agrag.pipelines.runtime import Runtime

QUESTIONS = ("Who wrote the Orion Planner?", "What caused the replanning storm in Lyon?", "lidar window aisle 14")
# every recipe that runs without an LLM or a cross-encoder: passages, entities, both, the graph walk, the reports, facts
RECIPES = ("chunk", "entity", "hybrid", "graph_expand", "thematic", "multi_hop", "fact")
SCORE_TOLERANCE = 1e-6  # a migrated vector may be one float32 step off (Qdrant re-normalizes), and so its scores
# Multi-step recipes fuse several rankings: a tie one engine orders the other way moves an item's rank in a step,
# and so its fused score, without changing what is found (the README's note on rebuilt stores).
SINGLE_RANKING = {"chunk", "entity", "fact", *(leg.value for leg in QueryLeg)}

Answers = dict[tuple[str, str], tuple[tuple[float, ...], frozenset[str]]]


def item_key(item: Any) -> str:
    """A result's kind and id (chunks, entities and reports share no id space)."""
    return f"{type(item).__name__}:{getattr(item, 'id', item)}"


def ranked(scored: Iterable[tuple[str, float]]) -> tuple[tuple[float, ...], frozenset[str]]:
    """A ranked list as its scores and the ids scored above its last score.

    Items tied at the cut-off may differ between two engines (each orders ties its own way, so a tie at the limit
    keeps a different one); every item above it, and every score, must be the same.
    """
    pairs = list(scored)
    last = min((score for _, score in pairs), default=0.0)
    return tuple(sorted(score for _, score in pairs)), frozenset(
        i for i, score in pairs if score > last + SCORE_TOLERANCE
    )


def recipe_answers(runtime: Runtime, embedder: SentenceTransformersTextEmbedder) -> Answers:
    """What each recipe of ``RECIPES`` and each leg of the chunk collection answers to each of ``QUESTIONS``."""
    answers: Answers = {}
    for question in QUESTIONS:
        dense = embedder.embed_batch([question])[0]
        for recipe in RECIPES:
            response = runtime.engine.search_sync(question, runtime.config_for([f"recipe={recipe}"]).recipe)
            answers[(recipe, question)] = ranked((item_key(r.item), r.score) for r in response.results)
        for leg in QueryLeg:
            hits = runtime.store.chunks.query_leg(leg, dense, question, 8)
            answers[(leg.value, question)] = ranked((h.id, h.score) for h in hits)
    return answers


def assert_same_answers(before: Answers, after: Answers) -> None:
    """The same results above each list's cut-off, and (for one ranking, not a fusion of several) the same scores."""
    assert set(before) == set(after)
    for key, (scores, above) in before.items():
        moved_scores, moved_above = after[key]
        swapped = sorted(moved_above ^ above)
        if key[0] in SINGLE_RANKING:
            assert moved_above == above, (key, swapped)
        else:
            # A fused recipe's step may cut a tie (an RRF tie inside the shard, at the end of a leg's candidates,
            # where a vector one float32 step off moves an item in or out) at another member: one item swapped
            # for another (in the failure that taught this, both at the same fused score), no more.
            assert len(swapped) <= 2 and len(moved_above) == len(above), (key, swapped)
        assert len(moved_scores) == len(scores), key
        if key[0] in SINGLE_RANKING:
            assert all(math.isclose(a, b, abs_tol=SCORE_TOLERANCE) for a, b in zip(scores, moved_scores, strict=True))
