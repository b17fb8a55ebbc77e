"""``TextFileLoader``: reads the Markdown and plain-text files of a folder as document versions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from haystack import component

from agrag.components.data_models.document import Document, content_version, document_id_for
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.errors import IngestError

MARKDOWN_SUFFIXES = (".md", ".markdown")
SUFFIXES = (*MARKDOWN_SUFFIXES, ".txt")
DEFAULT_MAX_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileFailure:
    """A file that was not loaded, and why."""

    source_path: str
    reason: str


def checked_folder(root: str) -> Path:
    """Return ``root`` resolved; raise ``IngestError`` if it is not a folder."""
    base = Path(root).expanduser()
    if not base.is_dir():
        raise IngestError(f"{root!r} is not a folder. Give `agrag ingest` a folder of .md or .txt files.")
    return base.resolve()


_MAX_TITLE_LINE = 120


def _title(text: str, fallback: str, markdown: bool) -> str:
    """Markdown: the first ``# `` heading. Plain text: a short first line followed by more text. Else the file name."""
    lines = text.strip().splitlines()
    if markdown:
        return next(
            (h for line in lines if line.startswith("# ") and (h := line[2:].strip().strip("#").strip())), fallback
        )
    if len(lines) > 1 and len(first := lines[0].strip()) <= _MAX_TITLE_LINE:
        return first
    return fallback


@component
class TextFileLoader:
    """Loads ``.md``, ``.markdown`` and ``.txt`` files below a folder, one ``LoadedDocument`` per file.

    Paths stay inside the folder: hidden files and folders are skipped and symlinks that lead out of it are
    refused. A file that cannot be read (not UTF-8, empty, too large) is reported in ``failures`` and never stops
    the others. Line endings are normalized to LF; that normalized text is the version's text.

    Usage:
        ```python
        result = TextFileLoader().run(root="examples/acme_notes")
        docs, failures = result["documents"], result["failures"]
        ```
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes

    @component.output_types(documents=list[LoadedDocument], failures=list[FileFailure])
    def run(self, root: str) -> dict[str, list[LoadedDocument] | list[FileFailure]]:
        """Load every supported file below ``root``, in path order.

        Raises:
            IngestError: ``root`` is not a folder.
        """
        base = checked_folder(root)
        documents: list[LoadedDocument] = []
        failures: list[FileFailure] = []
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(base)
            if any(part.startswith(".") for part in rel.parts) or path.suffix.lower() not in SUFFIXES:
                continue
            loaded = self._load(base, path, rel.as_posix())
            if isinstance(loaded, LoadedDocument):
                documents.append(loaded)
            else:
                failures.append(loaded)
        return {"documents": documents, "failures": failures}

    def _load(self, base: Path, path: Path, rel: str) -> LoadedDocument | FileFailure:
        real = path.resolve()
        if not real.is_relative_to(base):
            return FileFailure(rel, "symlink leads outside the ingested folder")
        if not real.is_file():
            return FileFailure(rel, "not a regular file")
        size = real.stat().st_size
        if size > self.max_bytes:
            return FileFailure(rel, f"{size} bytes is over the limit of {self.max_bytes}")
        raw = real.read_bytes()
        try:
            text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        except UnicodeDecodeError as exc:
            return FileFailure(rel, f"not valid UTF-8 (byte {exc.start})")
        if not text.strip():
            return FileFailure(rel, "empty file")
        document = Document(
            id=document_id_for(rel),
            version=content_version(text),
            title=_title(text, path.stem, path.suffix.lower() in MARKDOWN_SUFFIXES),
            source_path=rel,
        )
        return LoadedDocument(document=document, text=text)
