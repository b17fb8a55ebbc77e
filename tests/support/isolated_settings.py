"""Settings of one data dir that read nothing from the environment's ``AGRAG_*`` defaults or a ``.env`` file."""

from __future__ import annotations

from pathlib import Path

from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings


def isolated_settings(data_dir: Path, *, qdrant_path: Path | None = None) -> Settings:
    """The settings of ``data_dir`` (and of qdrant-client's local mode in ``qdrant_path``, if given), no ``.env``."""
    agrag = AgragSettings(data_dir=data_dir, qdrant_path=qdrant_path, _env_file=None)  # type: ignore[call-arg]
    return Settings(agrag, RetrievalSettings(_env_file=None))  # type: ignore[call-arg]
