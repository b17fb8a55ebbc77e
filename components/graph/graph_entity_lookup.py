"""``GraphEntityLookup``: the one way an entity id or name given by a caller becomes entities of the graph."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.errors import RetrievalError
from agrag.components.retrievers.qdrant_entity_retriever import QdrantEntityRetriever, entity_passes
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.vector_store import VectorStore

NAMED_LIMIT = 5  # entities one exact name may give (names are normalized, so several entities can share one)


class GraphEntityLookup:
    """Resolves what a caller calls an entity (its id, or its exact name) to entities, over the store or a scope.

    Two views of the graph, chosen by ``scope``:

    - ``None``: every stored entity, as retrieval reads them (``get_entities``, ``find_entities_by_name``).
    - an ``EvidenceScope`` (its ``document_ids`` None for every document): only the resolved entities that current
      text of the scope names, named as that text names them (``visible_entities``, ``entities_named_in_scope``),
      so a name only a document outside the scope uses finds nothing, exactly like an unknown one.

    Names match after normalization (case, spacing, punctuation), never by similarity; ``nearest`` is the separate,
    explicit fallback by meaning, for a caller that offers a near name rather than acting on it.

    Usage:
        ```python
        lookup = GraphEntityLookup(store.graph, store.entities)
        found = lookup.resolve("maria chen", EvidenceScope(("d3f…",)))  # id first, then the exact name
        nearest = lookup.nearest("Orion Planer", embedding)  # the closest entity by meaning, or None
        ```
    """

    def __init__(self, graph: GraphStore, entities: VectorStore | None = None) -> None:
        """Look entities up in ``graph``; ``entities`` (the entity vectors) serves ``nearest``."""
        self.graph = graph
        self.entities = entities

    def resolve(self, key: str, scope: EvidenceScope | None = None, limit: int = NAMED_LIMIT) -> list[Entity]:
        """The entity whose id is ``key``, else up to ``limit`` entities whose exact (normalized) name it is.

        A merged entity's id resolves to the entity it merged into where ``scope`` is given. Empty when neither
        matches (within ``scope``).
        """
        return self.with_ids([key], scope) or self.named(key, scope, limit)

    def with_ids(self, entity_ids: Sequence[str], scope: EvidenceScope | None = None) -> list[Entity]:
        """The entities among ``entity_ids`` (within ``scope``: the visible resolved entities, each once)."""
        if scope is None:
            return self.graph.get_entities(entity_ids)
        return self.graph.visible_entities(entity_ids, scope.documents)

    def named(self, name: str, scope: EvidenceScope | None = None, limit: int = NAMED_LIMIT) -> list[Entity]:
        """Up to ``limit`` entities whose normalized name is ``name``'s (within ``scope``: a name its text uses)."""
        if scope is None:
            return self.graph.find_entities_by_name(name, limit=limit)
        return self.graph.entities_named_in_scope(name, scope.documents, limit=limit)

    def exact(self, name: str, filters: SearchFilters | None = None) -> Entity | None:
        """The first entity of exactly this (normalized) name that meets ``filters``; None when there is none.

        ``filters.document_ids`` is the scope of the name (see ``named``); labels and the ``name``/``label``
        properties are checked against the entity as that scope names it.
        """
        documents = filters.document_ids if filters is not None and filters.document_ids else None
        scope = EvidenceScope(documents) if documents else None
        return next((e for e in self.named(name, scope) if entity_passes(e, filters)), None)

    def nearest(self, name: str, embedding: Embedding, filters: SearchFilters | None = None) -> Entity | None:
        """The entity search's top hit for ``name`` (its ``embedding``) within ``filters``; None when none is found.

        Raises:
            ComponentConfigError: the lookup was made without the entity vectors.
            RetrievalError: the entity search failed.
        """
        if self.entities is None:
            raise ComponentConfigError(
                "GraphEntityLookup", "nearest needs the entity vectors", "Pass the store's entities collection."
            )
        search = QdrantEntityRetriever(
            self.entities, top_k=1, ids_of_documents=self.graph.entity_ids_of_documents, graph=self.graph
        )
        out = search.run(query=name, query_embedding=embedding, filters=filters)
        if not out["status"].ok:
            raise RetrievalError(f"Entity search for {name!r} failed: {out['status'].error}")
        return next((r.item for r in out["results"] if isinstance(r.item, Entity)), None)
