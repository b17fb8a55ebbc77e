"""Errors of opening stores from a ``StoreSpec`` (their own module: ``components/errors.py`` is at its size limit)."""

from __future__ import annotations

from agrag.components.errors import StoreError


class StoreSpecMismatchError(StoreError):
    """A component asks for a data dir this process holds open, but with other settings than it was opened with.

    The embedded stores open once per process, so the open store cannot be opened again with the component's.
    """

    def __init__(self, data_dir: str, opened: str, wanted: str) -> None:
        self.data_dir = data_dir
        super().__init__(
            f"The data dir {data_dir} is open in this process with {opened}, but a component asks for it with "
            f"{wanted}. Build the pipeline with the settings the data dir was opened with (for example the same "
            "RETRIEVAL_RRF_K and embedder.model), or close the open stores first."
        )


class StoreNotOpenError(StoreError):
    """A component holds a ``StoreSpec`` with no opener, and no store of its data dir is open in this process."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = data_dir
        super().__init__(
            f"No store of the data dir {data_dir} is open in this process, and the component's store spec names no "
            "opener. Open the data dir first (e.g. agrag.pipelines.runtime.open_runtime), or give the spec an "
            "opener such as agrag.pipelines.store_factory.open_store_spec."
        )
