"""``GraphCommunityExpander``: the reports of the communities around the entities a search found."""

from __future__ import annotations

from typing import Any

from haystack import component

from agrag.components import defaults
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.retrieval_method import SearchStep
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.retrievers.guarded_run import guarded_run
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.store_backed import StoreBacked
from agrag.components.stores.store_ref import StoreRef, graph_part
from agrag.components.stores.store_spec import StoreSpec

METHOD = SearchStep.COMMUNITY_EXPAND


@component
class GraphCommunityExpander(StoreBacked):
    """Adds the reports of the communities that overlap the entities found (``community_expand`` of a recipe).

    Communities are ranked by how many of the found entities they hold, then by how specific they are (a deeper
    level, fewer members), then by their report's rating; only communities with a report are added. Built from the
    open graph store or from a ``StoreSpec`` (opened in ``warm_up``), it serializes as the spec.

    Usage:
        ```python
        expander = GraphCommunityExpander(store.graph, top_k=3)
        reports = expander.run(results=fused)["results"]
        ```
    """

    def __init__(self, graph: GraphStore | StoreSpec, top_k: int = defaults.RECIPE_COMMUNITY_TOP_K) -> None:
        self._graph = StoreRef(graph, graph_part)
        self.top_k = top_k

    @property
    def graph(self) -> GraphStore:
        """The graph store of the communities (opened from its spec on first use)."""
        return self._graph.get()

    def _store_refs(self) -> dict[str, StoreRef[Any] | None]:
        return {"graph": self._graph}

    def _plain_params(self) -> dict[str, Any]:
        return {"top_k": self.top_k}

    @component.output_types(results=list[SearchResult], status=MethodStatus)
    def run(self, results: list[SearchResult], filters: SearchFilters | None = None) -> MethodOutput:
        """The reports of up to ``top_k`` communities overlapping the entity results, best first.

        ``filters.properties`` keep only the communities whose stored fields match (a property communities do not
        store matches none). A document filter is refused before this step runs (see ``filter_support``). A failure
        (of the store, or of the filters) is reported in ``status`` and adds nothing, so the search still returns.
        """
        return guarded_run(METHOD, lambda: self._reports(results, filters))

    def _reports(self, results: list[SearchResult], filters: SearchFilters | None) -> list[SearchResult]:
        found = {r.item.id for r in results if isinstance(r.item, Entity)}
        ranked: list[tuple[tuple[int, int, int, float], Community]] = []
        if found and self.top_k:
            for community in self.graph.communities_of(sorted(found)):
                overlap = len(found.intersection(community.entity_ids))
                if overlap and community.report is not None and _matches(community, filters):
                    key = (-overlap, -community.level, len(community.entity_ids), -community.report.rating)
                    ranked.append((key, community))
        ranked.sort(key=lambda row: (row[0], row[1].id))
        chosen = [c for _, c in ranked[: self.top_k]]
        return [SearchResult(c, 1.0 / (1 + rank), METHOD, (METHOD,)) for rank, c in enumerate(chosen)]


def _matches(community: Community, filters: SearchFilters | None) -> bool:
    if filters is None:
        return True
    report = community.report
    stored: dict[str, object] = {"level": community.level, "parent_id": community.parent_id or ""}
    if report is not None:
        stored.update(method=report.method, title=report.title)
    for key, value in filters.properties.items():
        if key not in stored or stored[key] not in (value if isinstance(value, tuple) else (value,)):
            return False
    return True
