"""``StoreBacked``: warm-up and serialization for a component that reads its stores through ``StoreRef``s."""

from __future__ import annotations

from typing import Any, Self

from haystack.core.serialization import default_from_dict, default_to_dict

from agrag.components.stores.store_ref import StoreRef


class StoreBacked:
    """Serialization and warm-up shared by the components that read stores (retrievers, expanders, rerankers).

    A subclass names its store parameters in ``_store_refs`` (init parameter -> its ``StoreRef``, or None when not
    given) and its other init parameters in ``_plain_params``; ``to_dict`` writes the stores as their ``StoreSpec``,
    so the component can be loaded in another process, and ``warm_up`` opens what was given as a spec.
    """

    def _store_refs(self) -> dict[str, StoreRef[Any] | None]:
        raise NotImplementedError

    def _plain_params(self) -> dict[str, Any]:
        raise NotImplementedError

    def warm_up(self) -> None:
        """Open the stores named by spec (the ones this process holds, else opened now)."""
        for ref in self._store_refs().values():
            if ref is not None:
                ref.get()

    def to_dict(self) -> dict[str, Any]:
        """Serialize with the store specs in place of the open stores.

        Raises:
            SerializationError: a store was given open but was not opened from a data dir.
        """
        name = type(self).__name__
        specs = {key: None if ref is None else ref.spec(name) for key, ref in self._store_refs().items()}
        return default_to_dict(self, **self._plain_params(), **specs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Deserialize a component written by ``to_dict``; its stores open in ``warm_up``."""
        return default_from_dict(cls, data)
