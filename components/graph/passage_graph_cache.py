"""``PassageGraphCache``: one in-memory ``PassageGraph`` per store, rebuilt only after a write."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from typing import Any

from haystack.core.serialization import default_from_dict, default_to_dict

from agrag.components.data_models.passage_names import PassageNames
from agrag.components.graph.passage_graph import PassageGraph
from agrag.components.stores.graph_store import GENERATION_KEY, GraphStore
from agrag.components.stores.heap import release_free_heap
from agrag.components.stores.large_builds import LARGE_BUILDS
from agrag.components.stores.store_ref import StoreRef, graph_part
from agrag.components.stores.store_spec import StoreSpec

MAX_SCOPED = 16  # passage graphs of document scopes kept per cache


class PassageGraphCache:
    """Holds the passage-entity graph snapshot of a store, shared by the methods that need it in one engine.

    The snapshot is read again from the store only when the store's generation (bumped by every write) changed.
    Thread-safe: the methods of a recipe run at the same time. Given a ``StoreSpec`` instead of the graph store,
    it opens (or finds) the store on first use, and serializes (``to_dict``) as that spec.

    Usage:
        ```python
        cache = PassageGraphCache(store.graph)
        graph = cache.get()  # the same object until the next write
        ```
    """

    def __init__(self, graph_store: GraphStore | StoreSpec) -> None:
        self._graph_store = StoreRef(graph_store, graph_part)
        self._snapshot: tuple[str, PassageGraph] | None = None
        self._scoped: OrderedDict[tuple[str, frozenset[str]], PassageGraph] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def graph_store(self) -> GraphStore:
        """The graph store the snapshots are read from (opened from its spec on first use)."""
        return self._graph_store.get()

    def to_dict(self) -> dict[str, Any]:
        """Serialize as the spec of the graph store (``SerializationError`` for a store opened without one)."""
        return default_to_dict(self, graph_store=self._graph_store.spec(type(self).__name__))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PassageGraphCache:
        """Deserialize a cache written by ``to_dict``; its store opens on first use."""
        return default_from_dict(cls, data)

    def get(self) -> PassageGraph:
        """The snapshot of the store's current generation."""
        generation = self.graph_store.info().get(GENERATION_KEY, "")
        with self._lock:
            if self._snapshot is None or self._snapshot[0] != generation:
                self._snapshot = None  # the old snapshot goes before the new one is built, not after
                with LARGE_BUILDS:
                    self._snapshot = (generation, PassageGraph.from_columns(self.graph_store.passage_columns()))
                    release_free_heap()  # what building it allocated and freed
            return self._snapshot[1]

    def names_for(self, names: Sequence[str]) -> PassageGraph | PassageNames:
        """What the graph says of ``names``: the current snapshot if built, else the store's answer for them alone.

        A name lookup never builds the snapshot (7.8 s at 100,000 chunks, after every write).
        """
        generation = self.graph_store.info().get(GENERATION_KEY, "")
        with self._lock:
            if self._snapshot is not None and self._snapshot[0] == generation:
                return self._snapshot[1]
        return self.graph_store.passage_names(names)

    def scoped(self, documents: Collection[str]) -> PassageGraph:
        """The snapshot of the current chunks of ``documents`` only (the most recent ``MAX_SCOPED`` are kept).

        A walk on it never passes through text of another document, so neither its reach nor its ranking depends
        on one.
        """
        whole = self.get()
        generation = self.graph_store.info().get(GENERATION_KEY, "")
        key = (generation, frozenset(documents))
        with self._lock:
            if key in self._scoped:
                self._scoped.move_to_end(key)
                return self._scoped[key]
        graph = whole.within(key[1])
        with self._lock:
            self._scoped[key] = graph
            while len(self._scoped) > MAX_SCOPED:
                self._scoped.popitem(last=False)
        return graph
