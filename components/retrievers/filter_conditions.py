"""Turns ``SearchFilters`` into the payload conditions of one collection, so filters run inside the store query."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.errors import RetrievalError
from agrag.components.stores.vector_payloads import DOCUMENT_IDS
from agrag.components.stores.vector_store import PayloadFilter, VectorCollection

# The stored fields each collection can be filtered on with ``SearchFilters.properties``.
FILTERABLE = {
    VectorCollection.CHUNKS: ("document_id", "document_version", "title", "kind", "parent_id", "order"),
    VectorCollection.ENTITIES: ("name", "label"),
    VectorCollection.COMMUNITIES: ("level", "parent_id", "method", "title"),
    VectorCollection.FACTS: ("type", "source", "target", "source_id", "target_id"),
}

IdsOfDocuments = Callable[[tuple[str, ...]], Iterable[str]]


def check_properties(filters: SearchFilters) -> None:
    """Refuse a property no collection stores: it would silently match nothing.

    Raises:
        RetrievalError: naming the unknown property and the valid ones.
    """
    known = sorted({f for fields in FILTERABLE.values() for f in fields})
    unknown = sorted(set(filters.properties) - set(known))
    if unknown:
        raise RetrievalError(
            f"Unknown filter propert{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}: "
            f"filters.properties can name {', '.join(known)}."
        )


def payload_filter_for(
    collection: VectorCollection,
    base: PayloadFilter,
    filters: SearchFilters | None,
    ids_of_documents: IdsOfDocuments | None = None,
) -> PayloadFilter:
    """``base`` narrowed by the filters that apply to ``collection``.

    Labels apply to entities only, relation types to facts only (their predicate). Document ids apply to chunks
    through their ``document_id``; to facts through their passages' ``document_ids`` (some passage in the documents,
    none outside them, as the graph walk crosses a relation only when every passage of it is in scope); and to
    entities and communities through ``ids_of_documents`` (the graph's answer: those supported by the documents'
    current chunks). A property a collection does not store is a condition its points cannot meet.
    """
    if filters is None or filters.empty:
        return base
    result = base
    if filters.labels and collection is VectorCollection.ENTITIES:
        result = result.and_("label", filters.labels)
    if filters.relation_types and collection is VectorCollection.FACTS:
        result = result.and_("type", filters.relation_types)
    if filters.document_ids:
        if collection is VectorCollection.CHUNKS:
            result = result.and_("document_id", filters.document_ids)
        elif collection is VectorCollection.FACTS:
            result = result.and_(DOCUMENT_IDS, filters.document_ids).and_within(DOCUMENT_IDS, filters.document_ids)
        elif ids_of_documents is not None:
            result = result.only_ids(ids_of_documents(filters.document_ids))
    for key, value in filters.properties.items():
        result = result.and_(key, value) if key in FILTERABLE[collection] else result.only_ids(())
    return result
