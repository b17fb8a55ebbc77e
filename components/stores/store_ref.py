"""``StoreRef``: one part of a knowledge store (the graph or a collection), held open or named by a ``StoreSpec``."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from haystack.core.errors import SerializationError

from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.store_registry import open_store, registered_stores
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_store import VectorStore

T = TypeVar("T")


class StoreRef(Generic[T]):
    """The store part a component reads, given open or as a ``StoreSpec``.

    Given open, it serializes as the spec of the registered store holding it; given as a spec, it is opened on first
    use (``warm_up``) through ``store_registry.open_store``.

    Usage:
        ```python
        chunks = StoreRef(spec_or_vector_store, lambda store: store.chunks)
        chunks.get().count()  # opens (or finds) the store the first time
        chunks.spec("QdrantChunkRetriever")  # what to_dict writes
        ```
    """

    def __init__(self, held: T | StoreSpec, part: Callable[[KnowledgeStore], T]) -> None:
        self._spec = held if isinstance(held, StoreSpec) else None
        self._live: T | None = None if isinstance(held, StoreSpec) else held
        self._part = part
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        """Whether the part has been opened (or was given open)."""
        return self._live is not None

    def get(self) -> T:
        """The open part; a spec is resolved the first time (the store this process holds, else opened)."""
        if self._live is None:
            with self._lock:
                if self._live is None:
                    assert self._spec is not None  # one of the two is always set
                    self._live = self._part(open_store(self._spec))
        return self._live

    def spec(self, component: str) -> StoreSpec:
        """The spec to serialize: the one given, else that of the registered store whose part is the one given open.

        Raises:
            SerializationError: the part was given open but belongs to no store opened with a spec (a store put
                together by hand, as some tests do), so no other process could open it.
        """
        if self._spec is None:
            live = self._live
            self._spec = next((s.spec for s in registered_stores() if _same(self._part(s), live)), None)
        if self._spec is None:
            raise SerializationError(
                f"{component} cannot be serialized: its store was not opened from a data dir (no StoreSpec). Build "
                "it from a store opened by open_knowledge_store or open_runtime, or pass a StoreSpec."
            )
        return self._spec


def graph_part(store: KnowledgeStore) -> GraphStore:
    """The graph store of ``store`` (the ``part`` of a ``StoreRef`` to the graph)."""
    return store.graph


def chunks_part(store: KnowledgeStore) -> VectorStore:
    """The chunks collection of ``store``."""
    return store.chunks


def entities_part(store: KnowledgeStore) -> VectorStore:
    """The entities collection of ``store``."""
    return store.entities


def communities_part(store: KnowledgeStore) -> VectorStore:
    """The community reports collection of ``store``."""
    return store.communities


def facts_part(store: KnowledgeStore) -> VectorStore:
    """The facts collection of ``store``."""
    return store.facts


def _same(part: object, live: object) -> bool:
    # ``is`` for stores; ``==`` for bound methods (``graph.entity_ids_of_documents`` is a new object at every access)
    return part is live or (inspect.ismethod(live) and part == live)
