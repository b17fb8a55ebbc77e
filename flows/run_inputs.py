"""What a run was given (its data dir and overrides), checked, with messages that name where the user gave it.

A run of the ``agrag-ingest`` deployment comes from a form (fields ``folder``, ``overrides``, ``data_dir``), a run of
the HTTP API from a request body, ``agrag ingest`` from its arguments and ``AGRAG_DATA_DIR``: each message speaks of
the one the user filled in.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agrag.components.data_models.ingestion_run import RunSource
from agrag.components.errors import ConfigError
from agrag.flows.run_context import current_run
from agrag.pipelines.runtime import compose_config
from agrag.pipelines.settings import Settings, load_settings


def run_settings(data_dir: str | None, embedding_cache_dir: str | None, source: RunSource) -> Settings:
    """The settings of a run: ``data_dir`` and ``embedding_cache_dir`` replace the configured ones when given.

    Inside ``agrag serve`` a run may only write the data dir the server holds.

    Raises:
        ConfigError: a setting is wrong, or the run names another data dir than the server's.
    """
    settings = load_settings().with_data_dir(data_dir, embedding_cache_dir)
    context = current_run()
    served = context.served_data_dir if context is not None else None
    asked = settings.agrag.data_dir
    if served is not None and Path(asked).expanduser().resolve() != Path(served).resolve():
        field = {
            RunSource.PREFECT: "the form's field `data_dir`",
            RunSource.HTTP: "`data_dir` in the request",
        }.get(source, "AGRAG_DATA_DIR")
        raise ConfigError(
            f"This run asks for the data dir {asked} ({field}), but the `agrag serve` that runs it holds {served} "
            f"and writes only there. Set {field} to {served} (or leave it empty); to ingest into {asked}, use "
            "`agrag ingest` or `agrag serve-ingest` with that data dir where no server holds it."
        )
    return settings


def check_overrides(overrides: Sequence[str], settings: Settings, source: RunSource) -> None:
    """Refuse overrides that do not compose, before the data dir is opened.

    Raises:
        ConfigError: a bad override; from the Prefect form or an HTTP request the message names that field.
    """
    try:
        compose_config(overrides, settings)
    except ConfigError as exc:
        if source == RunSource.PREFECT:
            raise ConfigError(f"The form's field `overrides` holds an override agrag cannot use: {exc}") from exc
        if source == RunSource.HTTP:
            raise ConfigError(f"`overrides` in the request holds an override agrag cannot use: {exc}") from exc
        raise
