"""What a run was given (its data dir and overrides), checked, with messages that name where the user gave it.

A run of the ``agrag-ingest`` deployment comes from a form (fields ``folder``, ``overrides``, ``data_dir``), a run of
the HTTP API from a request body, ``agrag ingest`` from its arguments and ``AGRAG_DATA_DIR``: each message speaks of
the one the user filled in.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from agrag.components.data_models.ingestion_run import RunSource
from agrag.components.errors import ConfigError
from agrag.components.errors_overrides import RequestOverrideError
from agrag.components.loaders.files_root import TEXTS_FOLDER, resolve_ingest_folder
from agrag.flows.run_context import current_run
from agrag.pipelines.request_overrides import request_config
from agrag.pipelines.runtime import compose_config, served_runtime
from agrag.pipelines.settings import Settings, load_settings


def run_settings(data_dir: str | None, embedding_cache_dir: str | None, source: RunSource) -> Settings:
    """The settings of a run: ``data_dir`` and ``embedding_cache_dir`` replace the configured ones when given.

    Inside ``agrag serve`` a run may only write the data dir the server holds.

    Raises:
        ConfigError: a setting is wrong, or the run names another data dir than the server's.
    """
    settings = load_settings().with_data_dir(data_dir, embedding_cache_dir)
    check_data_dir_path(settings.agrag.data_dir)
    if settings.agrag.embedding_cache_dir is not None:
        check_data_dir_path(settings.agrag.embedding_cache_dir, "AGRAG_EMBEDDING_CACHE_DIR")
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


def run_folder(folder: str, settings: Settings, source: RunSource) -> Path:
    """The resolved folder a run ingests: inside ``AGRAG_FILES_ROOT`` if set, or the data dir's texts folder.

    The texts folder (``TEXTS_FOLDER`` in the data dir) holds only texts agrag was handed to ingest (the MCP
    ``ingest`` tool writes them there), so it is ingestible whatever the files root.

    Raises:
        IngestError: the folder is refused or is not a folder (see ``resolve_ingest_folder``).
    """
    texts = (settings.agrag.data_dir / TEXTS_FOLDER).expanduser().resolve()
    if folder.strip() and texts.is_dir() and Path(folder).expanduser().resolve() == texts:
        return texts
    return resolve_ingest_folder(folder, settings.agrag.files_root, source)


def check_data_dir_path(data_dir: Path, setting: str = "AGRAG_DATA_DIR") -> None:
    """Refuse a data dir that cannot be one (a file, inside a file, or below a folder this user cannot write).

    Runs before Prefect starts, so such a path fails at once with its reason, not after the start with a traceback.
    Also checks the other folders a run writes (``AGRAG_EMBEDDING_CACHE_DIR``), named by ``setting``.

    Raises:
        ConfigError: ``data_dir`` cannot be used; the message names the path, why, and the setting.
    """
    path = Path(data_dir).expanduser()
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    why = None
    if existing.exists() and not existing.is_dir():
        why = f"{existing} is a file, not a folder"
    elif existing != path and not os.access(existing, os.W_OK | os.X_OK):
        why = f"the folder {existing} cannot be written, so the data dir cannot be made in it"
    elif existing == path and not os.access(path, os.R_OK | os.W_OK | os.X_OK):
        why = "this user cannot read and write that folder"
    if why is not None:
        raise ConfigError(
            f"The folder {data_dir} ({setting}) cannot be used: {why}. Set {setting} to a folder you can write (it is "
            "made if missing)."
        )


def check_overrides(overrides: Sequence[str], settings: Settings, source: RunSource) -> None:
    """Refuse overrides that do not compose, before the data dir is opened.

    Overrides of the Prefect form or of an HTTP request are a request's: only allow-listed settings with plain
    values (``agrag.pipelines.request_overrides``); ``agrag ingest`` run in-process keeps all of Hydra.

    Raises:
        RequestOverrideError: an override a request may not give; the message names the field it came in.
        ConfigError: a bad override; from the Prefect form or an HTTP request the message names that field.
    """
    try:
        if source == RunSource.CLI:
            compose_config(overrides, settings)
        else:
            _request_config(overrides, settings)
    except RequestOverrideError as exc:
        where = "the form's field `overrides`" if source == RunSource.PREFECT else "`overrides` in the request"
        raise RequestOverrideError(exc.override, exc.why, where) from exc
    except ConfigError as exc:
        if source == RunSource.PREFECT:
            raise ConfigError(f"The form's field `overrides` holds an override agrag cannot use: {exc}") from exc
        if source == RunSource.HTTP:
            raise ConfigError(f"`overrides` in the request holds an override agrag cannot use: {exc}") from exc
        raise


def _request_config(overrides: Sequence[str], settings: Settings) -> None:
    """Compose a request's overrides as the runtime that will run them does (the server's, when one serves)."""
    served = served_runtime(settings.agrag.data_dir)
    if served is not None:
        served.request_config(overrides)
        return
    request_config(
        overrides,
        lambda asked: compose_config(asked, settings),
        lambda: compose_config((), settings),
        settings.agrag.files_root,
    )
