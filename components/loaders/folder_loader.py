"""``FolderLoader``: reads the documents of a folder (Markdown, reStructuredText, HTML, PDF, CSV, plain text)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from haystack import component

from agrag.components.data_models.document import Document, content_version, document_id_for
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.errors import ConfigError
from agrag.components.loaders.csv_parser import parse_csv
from agrag.components.loaders.file_failure import FileFailure, UnreadableFileError
from agrag.components.loaders.files_root import checked_folder
from agrag.components.loaders.html_parser import parse_html
from agrag.components.loaders.markdown_parser import parse_markdown
from agrag.components.loaders.parsed_document import ParsedDocument
from agrag.components.loaders.pdf_parser import parse_pdf
from agrag.components.loaders.plain_text_parser import parse_plain_text
from agrag.components.loaders.rst_parser import parse_rst
from agrag.components.loaders.text_decoding import decode_text

TextParser = Callable[[str, str], ParsedDocument]
BytesParser = Callable[[bytes, str], ParsedDocument]

TEXT_PARSERS: dict[str, TextParser] = {
    ".txt": parse_plain_text,
    ".md": parse_markdown,
    ".markdown": parse_markdown,
    ".rst": parse_rst,
    ".csv": parse_csv,
}
BYTES_PARSERS: dict[str, BytesParser] = {".html": parse_html, ".htm": parse_html, ".pdf": parse_pdf}
SUFFIXES = (*TEXT_PARSERS, *BYTES_PARSERS)
DEFAULT_MAX_BYTES = 20 * 1024 * 1024


@component
class FolderLoader:
    """Loads the documents below a folder, one ``LoadedDocument`` per file, with its headings and tables.

    Every format has its parser: Markdown (``.md``, ``.markdown``), reStructuredText (``.rst``), HTML (``.html``,
    ``.htm``), PDF (``.pdf``), CSV (``.csv``) and plain text (``.txt``). Files are read in path order; hidden
    files and folders and files with other suffixes are skipped silently. Paths stay inside the folder: symlinked
    folders are not followed and a symlinked file that leads out of it is refused. A file that cannot be loaded
    (too large, empty, binary, not UTF-8, an encrypted or scanned PDF, or one its parser chokes on) is reported in
    ``failures`` and never stops the others.

    Usage:
        ```python
        result = FolderLoader(max_bytes=5_000_000).run(root="examples/acme_notes")
        docs, failures = result["documents"], result["failures"]
        ```
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, suffixes: Sequence[str] = SUFFIXES) -> None:
        """Check and store the settings.

        Args:
            max_bytes: Larger files are reported and skipped (``ingest.loader.max_file_bytes``).
            suffixes: The file name endings to read, each one of ``SUFFIXES`` (``ingest.loader.suffixes``).

        Raises:
            ConfigError: ``max_bytes`` is below 1, or a suffix has no parser.
        """
        if max_bytes < 1:
            raise ConfigError(f"ingest.loader.max_file_bytes must be at least 1, not {max_bytes}.")
        wanted = tuple(s.lower() if s.startswith(".") else f".{s.lower()}" for s in suffixes)
        if unknown := sorted(set(wanted) - set(SUFFIXES)):
            raise ConfigError(
                f"No loader reads {', '.join(unknown)} files. Valid ingest.loader.suffixes: {', '.join(SUFFIXES)}."
            )
        self.max_bytes = max_bytes
        self.suffixes = wanted

    @component.output_types(documents=list[LoadedDocument], failures=list[FileFailure])
    def run(self, root: str) -> dict[str, list[LoadedDocument] | list[FileFailure]]:
        """Load every file below ``root`` whose suffix is wanted, in path order.

        Args:
            root: The folder to read (already checked against a files root, if there is one).

        Returns:
            ``documents``: the loaded versions. ``failures``: the files that were not loaded, and why.

        Raises:
            IngestError: ``root`` is not a folder.
        """
        base = checked_folder(root)
        documents: list[LoadedDocument] = []
        failures: list[FileFailure] = []
        for path, rel in self._candidates(base):
            loaded = self._load(base, path, rel)
            if isinstance(loaded, LoadedDocument):
                documents.append(loaded)
            else:
                failures.append(loaded)
        return {"documents": documents, "failures": failures}

    def _candidates(self, base: Path) -> Iterator[tuple[Path, str]]:
        """The non-hidden files below ``base`` with a wanted suffix, sorted by path; symlinked folders not entered."""
        found: list[tuple[tuple[str, ...], Path]] = []
        for folder, subfolders, files in os.walk(base, followlinks=False):
            subfolders[:] = [name for name in subfolders if not name.startswith(".")]
            for name in files:
                if not name.startswith(".") and Path(name).suffix.lower() in self.suffixes:
                    path = Path(folder, name)
                    found.append((path.relative_to(base).parts, path))
        for parts, path in sorted(found):
            yield path, "/".join(parts)

    def _load(self, base: Path, path: Path, rel: str) -> LoadedDocument | FileFailure:
        try:
            parsed = self._parse(base, path)
        except UnreadableFileError as exc:
            return FileFailure(rel, exc.reason)
        except Exception as exc:  # one file a parser chokes on must not stop the others
            return FileFailure(rel, f"could not parse: {type(exc).__name__}: {exc}")
        document = Document(
            id=document_id_for(rel),
            version=content_version(parsed.text),
            title=parsed.title,
            source_path=rel,
        )
        return LoadedDocument(document=document, text=parsed.text, headings=parsed.headings, tables=parsed.tables)

    def _parse(self, base: Path, path: Path) -> ParsedDocument:
        raw = self._read(base, path)
        suffix = path.suffix.lower()
        if suffix in BYTES_PARSERS:
            return BYTES_PARSERS[suffix](raw, path.stem)
        return TEXT_PARSERS[suffix](decode_text(raw), path.stem)

    def _read(self, base: Path, path: Path) -> bytes:
        """The bytes of the regular file at ``path``, within the folder and the size limit."""
        real = path.resolve()
        if not real.is_relative_to(base):
            raise UnreadableFileError("symlink leads outside the ingested folder")
        try:
            info = real.stat()
        except FileNotFoundError:
            raise UnreadableFileError("symlink leads nowhere (its target does not exist)") from None
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFileError("not a regular file")
        if info.st_size > self.max_bytes:
            raise UnreadableFileError(self._too_big(info.st_size))
        if info.st_size == 0:
            raise UnreadableFileError("empty file")
        try:
            with real.open("rb") as file:
                raw = file.read(self.max_bytes + 1)  # the file may have grown since stat
        except OSError as exc:
            raise UnreadableFileError(f"could not read: {exc.strerror or exc}") from exc
        if len(raw) > self.max_bytes:
            raise UnreadableFileError(self._too_big(len(raw)))
        return raw

    def _too_big(self, size: int) -> str:
        return f"{size} bytes is over the limit of {self.max_bytes} (ingest.loader.max_file_bytes)"
