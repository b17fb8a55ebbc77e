"""Builds, and reuses while nothing changed, the stores an evaluation searches.

Each passage becomes one ``.txt`` file (title line, then text) under the cache folder; the real ingestion flow ingests
the folder. A store is reused when the corpus, the ingest, embedder and vector store configuration and the
ingestion code are all unchanged; embeddings are cached by model and text, so a rebuild re-embeds nothing it has
seen before.
"""

from __future__ import annotations

import hashlib
import importlib
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agrag.components.data_models.document import document_id_for
from agrag.components.loaders.files_root import folder_key
from agrag.flows.ingest_flow import run_ingest
from agrag.flows.ingest_report import IngestReport
from agrag.pipelines.config_loader import load_config
from agrag.service.evaluation.dataset import EvalDataset
from agrag.service.server.private_prefect import private_prefect_api

_DONE = "ingest.done"
_CODE_PACKAGES = ("agrag.components", "agrag.flows")


def passage_file(index: int) -> str:
    """The file name of corpus passage ``index``; its document id is derived from it, so it is stable."""
    return f"{index:06d}.txt"


def document_index(dataset: EvalDataset, cache_dir: Path, files_root: Path | None = None) -> dict[str, int]:
    """Document id → corpus index, for the passages ingested from ``passages_folder(dataset, cache_dir)``.

    Ids contain the folder's name (its path relative to ``files_root`` when inside it), as the ingestion made them.
    """
    key = folder_key(dataset_folder(dataset, cache_dir) / "passages", files_root)
    return {document_id_for(passage_file(i), key): i for i in range(len(dataset.corpus))}


def dataset_folder(dataset: EvalDataset, cache_dir: Path) -> Path:
    """The cache folder of one corpus version."""
    return cache_dir / f"{dataset.name}-{dataset.corpus_hash[:12]}"


def passages_folder(dataset: EvalDataset, cache_dir: Path) -> Path:
    """Write the corpus as one file per passage (once per corpus version) and return the folder."""
    folder = dataset_folder(dataset, cache_dir) / "passages"
    if not (folder.parent / "passages.done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for index, passage in enumerate(dataset.corpus):
            (folder / passage_file(index)).write_text(passage.document_text, encoding="utf-8")
        (folder.parent / "passages.done").touch()
    return folder


def _code_hash() -> str:
    digest = hashlib.sha256()
    for name in _CODE_PACKAGES:
        for root in importlib.import_module(name).__path__:
            for path in sorted(Path(root).rglob("*.py")):
                digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class BuiltStore:
    """A data dir holding the ingested corpus, and the report of the ingest that built it (None if reused)."""

    data_dir: Path
    report: IngestReport | None


def build_store(
    dataset: EvalDataset, overrides: Sequence[str], label: str, cache_dir: Path, progress: bool
) -> BuiltStore:
    """Ingest the corpus with ``overrides`` into a store labelled ``label``, or reuse the one already built."""
    config = load_config(list(overrides))
    fingerprint = hashlib.sha256(
        "|".join(
            (
                config.ingest.model_dump_json(),
                config.embedder.model_dump_json(),
                config.vector_store.model_dump_json(),
                _code_hash(),
            )
        ).encode()
    ).hexdigest()[:12]
    base = dataset_folder(dataset, cache_dir)
    data_dir = base / f"store-{label}-{fingerprint}"
    if (data_dir / _DONE).exists():
        return BuiltStore(data_dir, None)
    for stale in base.glob(f"store-{label}-*"):
        shutil.rmtree(stale, ignore_errors=True)  # built by older code or settings; never read again
    with private_prefect_api():  # not Prefect's own temporary server, which outlives a kill -9 of the command
        report = run_ingest(
            str(passages_folder(dataset, cache_dir)),
            list(overrides),
            progress_bar=progress,
            data_dir=str(data_dir),
            embedding_cache_dir=str(cache_dir / "embeddings"),
        )
    (data_dir / _DONE).touch()
    return BuiltStore(data_dir, report)
