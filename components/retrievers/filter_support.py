"""Which search methods and steps honour which ``SearchFilters`` fields: the one declaration every entry point uses.

A method or step either keeps to a filter (every result it gives satisfies it, decided inside its store queries), or
refuses it: the engine does not run it under that filter and records a ``FilterNotHonouredError`` on the trace. A
refused part never runs unfiltered. The HTTP API's tokens limited to documents are a ``document_ids`` filter that
cannot be lifted, so the parts refusing ``document_ids`` are the ones such a token may not run.

Usage:
    ```python
    refused = refusals(("entity", "text2cypher"), SearchFilters(document_ids=("d3f…",)))
    refused["text2cypher"]  # FilterNotHonouredError: text2cypher cannot keep to the document_ids filter ...
    ```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.errors import FilterNotHonouredError


class SearchFilter(StrEnum):
    """The fields of ``SearchFilters``."""

    LABELS = "labels"
    RELATION_TYPES = "relation_types"
    DOCUMENT_IDS = "document_ids"
    PROPERTIES = "properties"

    @classmethod
    def active(cls, filters: SearchFilters | None) -> tuple[SearchFilter, ...]:
        """The fields ``filters`` sets, in declaration order."""
        if filters is None:
            return ()
        given = {
            cls.LABELS: filters.labels,
            cls.RELATION_TYPES: filters.relation_types,
            cls.DOCUMENT_IDS: filters.document_ids,
            cls.PROPERTIES: filters.properties,
        }
        return tuple(field for field, value in given.items() if value)


class Support(StrEnum):
    """How a part treats a filter."""

    HONOURED = "honoured"  # narrowed inside the part's store queries
    NOT_APPLICABLE = "not_applicable"  # the part returns no kind of item the filter constrains
    REFUSED = "refused"  # the part cannot keep to it, so it does not run under it


@dataclass(frozen=True, slots=True)
class FilterSupport:
    """How one part treats one filter, and why."""

    support: Support
    how: str


def _h(how: str) -> FilterSupport:
    return FilterSupport(Support.HONOURED, how)


def _na(how: str) -> FilterSupport:
    return FilterSupport(Support.NOT_APPLICABLE, how)


def _no(how: str) -> FilterSupport:
    return FilterSupport(Support.REFUSED, how)


L, R, D, P = SearchFilter.LABELS, SearchFilter.RELATION_TYPES, SearchFilter.DOCUMENT_IDS, SearchFilter.PROPERTIES
_REPORTS = "a community report summarises the text of every document its members come from"
_CYPHER = "a model-written graph query reads the whole graph and returns rows no filter can be checked on"
_PASSAGES_ONLY = "it returns passages only"
_REORDERS = "it only re-orders results that already passed the filters and adds none"

# Part names: the methods (entity, chunk, community, text2cypher, ppr, fact), the graph walk without and with its
# passages (bfs, bfs_passages), community_expand, and the re-rankers (node_distance, cross_encoder).
FILTER_SUPPORT: Mapping[str, Mapping[SearchFilter, FilterSupport]] = {
    "entity": {
        L: _h("a payload condition on the entity's label"),
        R: _na("it returns entities only"),
        D: _h("only entities current chunks of the documents name, named from those chunks' entity records"),
        P: _h("payload conditions on name and label; other properties match no entity"),
    },
    "chunk": {
        L: _na(_PASSAGES_ONLY),
        R: _na(_PASSAGES_ONLY),
        D: _h("a payload condition on the chunk's document_id"),
        P: _h("payload conditions on the chunk's fields; entity or community properties match no chunk"),
    },
    "community": {
        L: _na("it returns community reports only"),
        R: _na("it returns community reports only"),
        D: _no(_REPORTS),
        P: _h("payload conditions on level, parent_id, method and title"),
    },
    "text2cypher": {L: _no(_CYPHER), R: _no(_CYPHER), D: _no(_CYPHER), P: _no(_CYPHER)},
    "ppr": {
        L: _na(_PASSAGES_ONLY),
        R: _na("it walks mentions, not relations, and returns passages only"),
        D: _h("the walk runs on the passage graph of the documents' current chunks, and only their chunks score"),
        P: _h("payload conditions on the scored chunks"),
    },
    "fact": {
        L: _na("it returns facts, which carry no label"),
        R: _h("a payload condition on the fact's predicate (its relation type)"),
        D: _h("payload conditions: a passage of the fact in the documents and none outside them; passages read there"),
        P: _h("payload conditions on type, source, target, source_id and target_id; other properties match no fact"),
    },
    "bfs": {
        L: _h("reached entities of other labels are dropped"),
        R: _h("only relations of these types are crossed"),
        D: _h("only relations every source passage of which is in the documents, between entities they name"),
        P: _h("reached entities must match; relations store no property, so none is returned"),
    },
    "bfs_passages": {
        L: _h("as bfs; the passages are chunks, which labels do not constrain"),
        R: _h("only relations of these types are crossed, and only their passages returned"),
        D: _h("as bfs, and a payload condition on the passages' document_id"),
        P: _h("as bfs, and payload conditions on the passages"),
    },
    "community_expand": {
        L: _na("it returns community reports only"),
        R: _na("it returns community reports only"),
        D: _no(_REPORTS),
        P: _h("reports whose level, parent_id, method or title do not match are dropped"),
    },
    "node_distance": {L: _h(_REORDERS), R: _h(_REORDERS), D: _h(_REORDERS), P: _h(_REORDERS)},
    "cross_encoder": {L: _h(_REORDERS), R: _h(_REORDERS), D: _h(_REORDERS), P: _h(_REORDERS)},
}


def honouring(search_filter: SearchFilter) -> tuple[str, ...]:
    """The parts that keep to ``search_filter`` (honour it, or return nothing it constrains)."""
    return tuple(part for part, table in FILTER_SUPPORT.items() if table[search_filter].support is not Support.REFUSED)


UNDECLARED = FilterSupport(Support.REFUSED, "this part is not declared in filter_support")


def support_of(part: str, search_filter: SearchFilter) -> FilterSupport:
    """How ``part`` treats ``search_filter``; a part or filter missing from the declaration is refused."""
    return FILTER_SUPPORT.get(part, {}).get(search_filter, UNDECLARED)


def refused_filters(part: str, filters: Iterable[SearchFilter]) -> tuple[SearchFilter, ...]:
    """The filters among ``filters`` that ``part`` refuses."""
    return tuple(f for f in filters if support_of(part, f).support is Support.REFUSED)


def refusals(parts: Iterable[str], filters: SearchFilters | None) -> dict[str, FilterNotHonouredError]:
    """The parts among ``parts`` that must not run under ``filters``, each with the error the trace records."""
    active = SearchFilter.active(filters)
    refused: dict[str, FilterNotHonouredError] = {}
    for part in parts:
        which = refused_filters(part, active)
        if which:
            first = which[0]
            reason = support_of(part, first).how
            refused[part] = FilterNotHonouredError(part, first.value, reason, honouring(first))
    return refused
