"""``PassageGraph.from_columns`` (built from ``GraphStore.passage_columns``) equals ``PassageGraph(edges)``."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agrag.components.data_models.passage_columns import PassageColumns
from agrag.components.data_models.passage_edges import PassageEdges
from agrag.components.graph.passage_graph import PassageGraph


def columns_of(edges: PassageEdges) -> PassageColumns:
    """The columns a store would read for these edges (links may repeat, as rows of two reads do)."""
    chunks = sorted({c for c, _ in (*edges.mentions, *edges.about)})
    entities = sorted({e for _, e in (*edges.mentions, *edges.about)})
    at_chunk, at_entity = {c: i for i, c in enumerate(chunks)}, {e: i for i, e in enumerate(entities)}

    def positions(pairs: tuple[tuple[str, str], ...], side: int, at: dict[str, int]) -> np.ndarray:
        return np.array([at[pair[side]] for pair in pairs], dtype=np.int64)

    mentions = edges.mentions + edges.mentions[:3]  # repeated rows count once
    return PassageColumns(
        chunks,
        entities,
        positions(mentions, 0, at_chunk),
        positions(mentions, 1, at_entity),
        positions(edges.about, 0, at_chunk),
        positions(edges.about, 1, at_entity),
        edges.names,
    )


def _random_edges(seed: int) -> PassageEdges:
    """A Zipf-like graph: a few hub entities named everywhere, many rare ones, some chunks about an entity they name."""
    rng = random.Random(seed)
    entities = [f"e{n:03d}" for n in range(120)]
    weights = [1.0 / (rank + 1) for rank in range(len(entities))]
    mentions, about = set(), set()
    for c in range(300):
        chunk = f"d{c % 17}.c{c:03d}"
        named = set(rng.choices(entities, weights, k=rng.randrange(1, 6)))
        mentions |= {(chunk, e) for e in named}
        if rng.random() < 0.5:
            about.add((chunk, rng.choice([*named, rng.choice(entities)])))
    names = tuple(sorted({(f"name {e[-2:]}", e) for e in entities[:60]}))
    return PassageEdges(tuple(sorted(mentions)), tuple(sorted(about)), names)


@pytest.mark.parametrize("seed", range(5))
def test_the_same_walk_counts_and_names_as_from_edges(seed: int) -> None:
    edges = _random_edges(seed)
    built, read = PassageGraph(edges), PassageGraph.from_columns(columns_of(edges))
    assert (read.chunk_ids, read.entity_ids) == (built.chunk_ids, built.entity_ids)
    rng = random.Random(seed)
    for _ in range(6):
        seeds = rng.sample(built.entity_ids, rng.randrange(1, 4))
        assert dict(read.personalized_pagerank(seeds)) == dict(built.personalized_pagerank(seeds))
    for entity_id in built.entity_ids:
        assert read.chunk_count(entity_id) == built.chunk_count(entity_id)
    for name, _ in edges.names:
        assert read.entities_named(name) == built.entities_named(name)
    documents = ["d3", "d5"]
    assert dict(read.within(documents).personalized_pagerank(seeds)) == dict(
        built.within(documents).personalized_pagerank(seeds)
    )
