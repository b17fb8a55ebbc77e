"""``RRFJoiner``: Reciprocal Rank Fusion of the ranked lists of several search methods."""

# No `from __future__ import annotations` here: Haystack reads the Variadic marker from the live annotation.

import math
from collections.abc import Iterable
from dataclasses import replace

from haystack import component
from haystack.core.component.types import Variadic

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.resolved_entity import ResolvedEntity
from agrag.components.data_models.search_result import SearchMethod, SearchResult


def reciprocal_rank_fusion(lists: Iterable[Iterable[SearchResult]], k: int = 60) -> list[SearchResult]:
    """Fuse ranked lists by rank, not by score.

    Each method gives an item one vote, ``1 / (k + rank)``, at the item's best rank in that method's results;
    ranks count distinct items, so a duplicate neither adds weight nor pushes other items down. The output holds
    each item once, best first (ties: better best rank, then type and id, so the order is deterministic).
    Results are grouped by their ``method``, so two lists from one method still give it one vote per item.
    """
    if k < 1:
        raise ValueError(f"RRF k must be at least 1, got {k}.")
    ranks: dict[tuple[str, str], dict[SearchMethod, int]] = {}
    firsts: dict[tuple[str, str], SearchResult] = {}
    for results in lists:
        next_rank: dict[SearchMethod, int] = {}
        seen: set[tuple[SearchMethod, tuple[str, str]]] = set()
        for result in results:
            if (result.method, result.key) in seen:
                continue
            seen.add((result.method, result.key))
            rank = next_rank.get(result.method, 0) + 1
            next_rank[result.method] = rank
            by_method = ranks.setdefault(result.key, {})
            by_method[result.method] = min(rank, by_method.get(result.method, rank))
            first = firsts.setdefault(result.key, result)
            if isinstance(result.item, ResolvedEntity) and not isinstance(first.item, ResolvedEntity):
                # one entity, found once with what was merged into it: keep that (the ranking is the key's)
                firsts[result.key] = replace(first, item=result.item)
    fused = []
    for key, by_method in ranks.items():
        methods = tuple(sorted(by_method, key=lambda m: (by_method[m], m)))
        # fsum is exact whatever the order, so equal rank sets score equally and ties fall to the rule below
        score = math.fsum(1.0 / (k + r) for r in by_method.values())
        fused.append(
            (score, by_method[methods[0]], key, replace(firsts[key], score=score, method=methods[0], methods=methods))
        )
    fused.sort(key=lambda row: (-row[0], row[1], row[2]))
    return [row[3] for row in fused]


@component
class RRFJoiner:
    """Joins the result lists of several methods with Reciprocal Rank Fusion (see ``reciprocal_rank_fusion``).

    Unlike Haystack's ``DocumentJoiner``, ``k`` is configurable and a duplicate inside one list votes once.

    Usage:
        ```python
        fused = RRFJoiner(k=60).run(results=[entity_results, chunk_results])["results"]
        ```
    """

    def __init__(self, k: int = defaults.RRF_K) -> None:
        if k < 1:
            raise ComponentConfigError(
                "RRFJoiner", f"RRF k must be at least 1, got {k}", "Set RETRIEVAL_RRF_K to 1 or more (60 is usual)."
            )
        self.k = k

    @component.output_types(results=list[SearchResult])
    def run(self, results: Variadic[list[SearchResult]]) -> dict[str, list[SearchResult]]:
        """Fuse the lists; each result keeps every method that found it in ``methods``."""
        return {"results": reciprocal_rank_fusion(results, self.k)}
