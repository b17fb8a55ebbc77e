"""``PassageGraphCache``: one in-memory ``PassageGraph`` per store, rebuilt only after a write."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection

from agrag.components.graph.passage_graph import PassageGraph
from agrag.components.stores.graph_store import GENERATION_KEY, GraphStore

MAX_SCOPED = 16  # passage graphs of document scopes kept per cache


class PassageGraphCache:
    """Holds the passage-entity graph snapshot of a store, shared by the methods that need it in one engine.

    The snapshot is read again from the store only when the store's generation (bumped by every write) changed.
    Thread-safe: the methods of a recipe run at the same time.

    Usage:
        ```python
        cache = PassageGraphCache(store.graph)
        graph = cache.get()  # the same object until the next write
        ```
    """

    def __init__(self, graph_store: GraphStore) -> None:
        self.graph_store = graph_store
        self._snapshot: tuple[str, PassageGraph] | None = None
        self._scoped: OrderedDict[tuple[str, frozenset[str]], PassageGraph] = OrderedDict()
        self._lock = threading.Lock()

    def get(self) -> PassageGraph:
        """The snapshot of the store's current generation."""
        generation = self.graph_store.info().get(GENERATION_KEY, "")
        with self._lock:
            if self._snapshot is None or self._snapshot[0] != generation:
                self._snapshot = (generation, PassageGraph(self.graph_store.passage_edges()))
            return self._snapshot[1]

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
        inside = whole.edges.within(key[1])
        graph = PassageGraph(inside)
        with self._lock:
            self._scoped[key] = graph
            while len(self._scoped) > MAX_SCOPED:
                self._scoped.popitem(last=False)
        return graph
