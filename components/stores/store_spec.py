"""``StoreSpec``: what names the stores of one data dir, so a component can hold it instead of the open stores."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agrag.components.data_models.vector_backend import VectorBackend

if TYPE_CHECKING:
    from haystack.utils import Secret

    from agrag.components.stores.knowledge_store import KnowledgeStore

StoreOpener = Callable[["StoreSpec"], "KnowledgeStore"]


@dataclass(frozen=True, slots=True)
class StoreSpec:
    """The data dir, the vector backend and the settings its stores were opened with; no open store.

    Components that read a knowledge store hold one of these (directly, or derived from the live store they were
    given), so they serialize to a Haystack pipeline YAML and load back in another process. ``opener`` is how a
    process that has not opened the data dir opens it (serialized by its import path); a process that has opened it
    gets that open store from ``store_registry.open_store``, never a second one (the embedded stores allow one open
    per process). ``qdrant_api_key`` is an environment variable reference, never the key.

    Usage:
        ```python
        spec = StoreSpec("/srv/agrag/.agrag", embedding_model="all-MiniLM-L6-v2", rrf_k=60)
        store = open_store(spec)  # the store this process has open, else opened by spec.opener
        ```
    """

    data_dir: str
    embedding_model: str
    rrf_k: int
    vector_backend: VectorBackend = VectorBackend.EDGE
    qdrant_url: str | None = None
    qdrant_path: str | None = None
    collection_prefix: str | None = None
    qdrant_api_key: Secret | None = None
    opener: StoreOpener | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # One data dir is one spec, whatever the working directory or the spelling of its path.
        object.__setattr__(self, "data_dir", str(Path(self.data_dir).expanduser().resolve()))
        object.__setattr__(self, "vector_backend", VectorBackend.from_str(str(self.vector_backend)))

    def to_dict(self) -> dict[str, Any]:
        """Serialize the spec the Haystack way (``qdrant_api_key`` as its environment variable names)."""
        # Haystack imports torch (about 1 s): not at import, which the CLI's client path shares.
        from haystack.core.serialization import default_to_dict  # noqa: PLC0415
        from haystack.utils import serialize_callable  # noqa: PLC0415

        params = dict(
            data_dir=self.data_dir,
            embedding_model=self.embedding_model,
            rrf_k=self.rrf_k,
            vector_backend=self.vector_backend.value,
            qdrant_url=self.qdrant_url,
            qdrant_path=self.qdrant_path,
            collection_prefix=self.collection_prefix,
            qdrant_api_key=self.qdrant_api_key,
            opener=serialize_callable(self.opener) if self.opener is not None else None,
        )
        # unset fields are left out, so the YAML shows what names this data dir and nothing else
        return default_to_dict(self, **{key: value for key, value in params.items() if value is not None})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StoreSpec:
        """Deserialize a spec written by ``to_dict``."""
        from haystack.core.serialization import default_from_dict  # noqa: PLC0415
        from haystack.utils import deserialize_callable  # noqa: PLC0415

        params = dict(data.get("init_parameters", {}))
        if isinstance(params.get("opener"), str):
            params["opener"] = deserialize_callable(params["opener"])
        return default_from_dict(cls, {**data, "init_parameters": params})
