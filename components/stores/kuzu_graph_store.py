"""``KuzuGraphStore``: the graph in an embedded Kùzu database file (the adapter is the ``kuzu`` package beside)."""

from agrag.components.stores.kuzu.graph_store import READ_ONLY_MAX_BYTES, KuzuGraphStore

__all__ = ["READ_ONLY_MAX_BYTES", "KuzuGraphStore"]
