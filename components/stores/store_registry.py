"""The stores this process holds open, by data dir: a ``StoreSpec`` resolves to the one open ``KnowledgeStore``.

The embedded stores (Kùzu, Qdrant Edge) and the ``DataDirLock`` allow one open per process, so every component that
names a data dir by spec must share the store the process already opened (registered by whoever opened it, e.g.
``pipelines.store_factory.open_knowledge_store``). Only when none is open does ``open_store`` open one, through the
spec's ``opener``; it is registered too, and closed when the process exits if nobody closed it before.

The opener is injected through the spec (and serialized by its import path) rather than imported here, because
components may not import ``pipelines``, where the store factory reads the settings.
"""

from __future__ import annotations

import atexit
import threading
from typing import TYPE_CHECKING

from agrag.components.store_spec_errors import StoreNotOpenError, StoreSpecMismatchError

if TYPE_CHECKING:  # knowledge_store imports this module (its close unregisters it)
    from agrag.components.stores.knowledge_store import KnowledgeStore
    from agrag.components.stores.store_spec import StoreSpec

_OPEN: dict[str, KnowledgeStore] = {}
# Reentrant: an opener registers the store it opens while ``open_store`` holds the lock.
_LOCK = threading.RLock()


def register_store(store: KnowledgeStore) -> None:
    """Make ``store`` the one this process resolves its spec's data dir to (a store without a spec is ignored)."""
    if store.spec is not None:
        with _LOCK:
            _OPEN[store.spec.data_dir] = store


def unregister_store(store: KnowledgeStore) -> None:
    """Forget ``store`` (if it is the one registered for its data dir); ``KnowledgeStore.close`` calls this."""
    if store.spec is not None:
        with _LOCK:
            if _OPEN.get(store.spec.data_dir) is store:
                del _OPEN[store.spec.data_dir]


def open_store(spec: StoreSpec) -> KnowledgeStore:
    """The open store of ``spec``'s data dir: the one this process holds, else one opened by ``spec.opener``.

    Raises:
        StoreSpecMismatchError: the data dir is open here with other settings than ``spec`` names.
        StoreNotOpenError: nothing holds the data dir and ``spec`` has no opener.
        StoreError: the opener failed (e.g. ``StoreLockedError``: another process holds the data dir).
    """
    with _LOCK:
        store = _OPEN.get(spec.data_dir)
        if store is None:
            if spec.opener is None:
                raise StoreNotOpenError(spec.data_dir)
            store = spec.opener(spec)
            register_store(store)
            atexit.register(_close_if_open, store)  # releases the data dir for the next process
        if store.spec != spec:
            raise StoreSpecMismatchError(spec.data_dir, _described(store.spec), _described(spec))
        return store


def registered_stores() -> list[KnowledgeStore]:
    """The stores this process holds open with a spec (a component built from one serializes as its spec)."""
    with _LOCK:
        return list(_OPEN.values())


def _close_if_open(store: KnowledgeStore) -> None:
    with _LOCK:
        still_open = store.spec is not None and _OPEN.get(store.spec.data_dir) is store
    if still_open:
        store.close()


def _described(spec: StoreSpec | None) -> str:
    if spec is None:
        return "no spec"
    fields = {
        "vector_backend": spec.vector_backend.value,
        "embedding_model": spec.embedding_model,
        "rrf_k": spec.rrf_k,
        "qdrant_url": spec.qdrant_url,
        "qdrant_path": spec.qdrant_path,
        "collection_prefix": spec.collection_prefix,
    }
    return ", ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
