"""``FolderLoader``: reads the documents of a folder (Markdown, reStructuredText, HTML, PDF, CSV, plain text)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from haystack import component

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.document import Document, content_version, document_id_for, printable_path
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.loaders.csv_parser import parse_csv
from agrag.components.loaders.file_failure import FileFailure, UnreadableFileError
from agrag.components.loaders.files_root import check_files_root, checked_folder, folder_key, source_folder
from agrag.components.loaders.html_parser import parse_html
from agrag.components.loaders.loader_errors import ListingTooLargeError
from agrag.components.loaders.markdown_parser import parse_markdown
from agrag.components.loaders.parsed_document import ParsedDocument
from agrag.components.loaders.pdf_parser import parse_pdf
from agrag.components.loaders.plain_text_parser import parse_plain_text
from agrag.components.loaders.rst_parser import parse_rst
from agrag.components.loaders.safe_open import read_below, read_path
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
DEFAULT_MAX_BYTES = defaults.LOADER_MAX_FILE_BYTES
MAX_LISTED_ENTRIES = 100_000
"""The most files and folders one listing of a folder walks; more is ``ListingTooLargeError`` before any read."""


@dataclass(frozen=True, slots=True)
class _Folder:
    """The folder being loaded: where it is, where reads start (``_anchor``), and what its documents record."""

    base: Path
    anchor: tuple[Path, tuple[str, ...]] | None
    key: str
    origin: str


@component
class FolderLoader:
    """Loads the documents below a folder, one ``LoadedDocument`` per file, with its headings and tables.

    Every format has its parser: Markdown (``.md``, ``.markdown``), reStructuredText (``.rst``), HTML (``.html``,
    ``.htm``), PDF (``.pdf``), CSV (``.csv``) and plain text (``.txt``). Files are read in path order; hidden
    files and folders and files with other suffixes are skipped silently. Paths stay inside the folder: symlinked
    folders are not followed and a symlinked file that leads out of it is refused. Below a files root no symlink is
    followed at all: each file is opened folder by folder from the root with ``O_NOFOLLOW`` (``safe_open``), so a
    symlink swapped in after the listing cannot lead outside. A folder of more than ``MAX_LISTED_ENTRIES`` files
    and folders is refused before anything is read. A file that cannot be loaded
    (too large, empty, binary, not UTF-8, an encrypted or scanned PDF, or one its parser chokes on) is reported in
    ``failures`` and never stops the others.

    Usage:
        ```python
        result = FolderLoader(max_bytes=5_000_000).run(root="examples/acme_notes")
        docs, failures = result["documents"], result["failures"]
        ```
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, suffixes: Sequence[str] = defaults.LOADER_SUFFIXES) -> None:
        """Check and store the settings.

        Args:
            max_bytes: Larger files are reported and skipped (``ingest.loader.max_file_bytes``).
            suffixes: The file name endings to read, each one of ``SUFFIXES`` (``ingest.loader.suffixes``).

        Raises:
            ComponentConfigError: ``max_bytes`` is below 1, or a suffix has no parser.
        """
        if max_bytes < 1:
            raise ComponentConfigError(
                "FolderLoader",
                f"max_bytes must be at least 1, not {max_bytes}",
                "Set ingest.loader.max_file_bytes to 1 or more.",
            )
        wanted = tuple(s.lower() if s.startswith(".") else f".{s.lower()}" for s in suffixes)
        if unknown := sorted(set(wanted) - set(SUFFIXES)):
            raise ComponentConfigError(
                "FolderLoader",
                f"No loader reads {', '.join(unknown)} files",
                f"Valid ingest.loader.suffixes: {', '.join(SUFFIXES)}.",
            )
        self.max_bytes = max_bytes
        self.suffixes = wanted

    @component.output_types(documents=list[LoadedDocument], failures=list[FileFailure])
    def run(
        self, root: str, files_root: str | None = None, files: list[str] | None = None
    ) -> dict[str, list[LoadedDocument] | list[FileFailure]]:
        r"""Load every file below ``root`` whose suffix is wanted (or only the chosen ``files``), in path order.

        Document ids come from each file's path relative to ``files_root`` when ``root`` is inside it, else from
        the folder's name and the path inside it (``files_root.folder_key``), so the same relative path in two
        folders gives two documents; each document records its folder (``Document.source_folder``). A file name
        that is not UTF-8 is loaded under its bytes (its ``source_path`` shows them as ``\xNN``).

        Args:
            root: The folder to read (already checked against a files root, if there is one).
            files_root: ``AGRAG_FILES_ROOT``, if set.
            files: Only these files (POSIX paths relative to ``root``, e.g. from ``file_selection.select_files``);
                None reads the whole folder. A chosen file is held to the same rules as one found in the folder
                (no '..', nothing hidden, no symlinked folder, a wanted suffix); one that breaks them, or is missing,
                is reported in ``failures``. Its document id is the one a whole-folder run gives it.

        Returns:
            ``documents``: the loaded versions. ``failures``: the files that were not loaded, and why.

        Raises:
            IngestError: ``root`` is not a folder.
            ListingTooLargeError: ``root`` holds more than ``MAX_LISTED_ENTRIES`` files and folders.
            FilesRootRefusedError: ``files_root`` is ``/``, the home folder or a folder holding it.
        """
        base = checked_folder(root)
        limit = Path(files_root) if files_root else None
        origin = printable_path(source_folder(base, limit))
        target = _Folder(base, _anchor(base, limit), folder_key(base, limit), origin)
        documents: list[LoadedDocument] = []
        failures: list[FileFailure] = []
        candidates = self._candidates(base) if files is None else self._chosen(base, files, failures)
        for path, rel in candidates:
            loaded = self._load(target, path, rel)
            if isinstance(loaded, LoadedDocument):
                documents.append(loaded)
            else:
                failures.append(loaded)
        return {"documents": documents, "failures": failures}

    def _candidates(self, base: Path) -> list[tuple[Path, str]]:
        """The non-hidden files below ``base`` with a wanted suffix, sorted by path; symlinked folders not entered.

        Raises:
            ListingTooLargeError: the walk meets more than ``MAX_LISTED_ENTRIES`` files and folders (it stops there).
        """
        found: list[tuple[tuple[str, ...], Path]] = []
        listed = 0
        for folder, subfolders, files in os.walk(base, followlinks=False):
            listed += len(subfolders) + len(files)
            if listed > MAX_LISTED_ENTRIES:
                raise ListingTooLargeError(printable_path(str(base)), MAX_LISTED_ENTRIES)
            subfolders[:] = [name for name in subfolders if not name.startswith(".")]
            for name in files:
                if not name.startswith(".") and Path(name).suffix.lower() in self.suffixes:
                    path = Path(folder, name)
                    found.append((path.relative_to(base).parts, path))
        return [(path, "/".join(parts)) for parts, path in sorted(found)]

    def _chosen(self, base: Path, files: list[str], failures: list[FileFailure]) -> Iterator[tuple[Path, str]]:
        """The chosen files below ``base``, sorted by path; those a whole-folder run would not read are failures."""
        for rel in sorted(set(files), key=lambda name: PurePosixPath(name).parts):
            parts = PurePosixPath(rel).parts
            path = base.joinpath(*parts)
            why = None
            if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
                why = "not a path inside the ingested folder"
            elif any(part.startswith(".") for part in parts):
                why = "hidden (or below a hidden folder)"
            elif path.suffix.lower() not in self.suffixes:
                why = f"its suffix is not one ingest.loader.suffixes reads ({', '.join(self.suffixes)})"
            elif path.parent.resolve() != base.joinpath(*parts[:-1]):
                why = "below a symlinked folder (name the file by its real path)"
            elif not path.exists() and not path.is_symlink():
                why = "no such file"
            if why is None:
                yield path, "/".join(parts)
            else:
                failures.append(FileFailure(printable_path(rel), why))

    def _load(self, target: _Folder, path: Path, rel: str) -> LoadedDocument | FileFailure:
        shown = printable_path(rel)  # what is stored and printed: a name that is not UTF-8 shows its bytes
        try:
            parsed = self._parse(self._read(target, path, rel), path)
        except UnreadableFileError as exc:
            return FileFailure(shown, exc.reason)
        except Exception as exc:  # one file a parser chokes on must not stop the others
            return FileFailure(shown, f"could not parse: {type(exc).__name__}: {exc}")
        document = Document(
            id=document_id_for(rel, target.key),
            version=content_version(parsed.text),
            title=printable_path(parsed.title),  # a title taken from a file name that is not UTF-8
            source_path=shown,
            source_folder=target.origin,
        )
        return LoadedDocument(document=document, text=parsed.text, headings=parsed.headings, tables=parsed.tables)

    @staticmethod
    def _parse(raw: bytes, path: Path) -> ParsedDocument:
        suffix = path.suffix.lower()
        if suffix in BYTES_PARSERS:
            return BYTES_PARSERS[suffix](raw, path.stem).with_short_headings()
        return TEXT_PARSERS[suffix](decode_text(raw), path.stem).with_short_headings()

    def _read(self, target: _Folder, path: Path, rel: str) -> bytes:
        """The bytes of the regular file at ``path``, within the folder and the size limit.

        The path checks name what is wrong with a symlink; the read itself goes through ``safe_open``, which below a
        files root follows no symlink, whenever it appeared.
        """
        base, anchor = target.base, target.anchor
        real = path.resolve()
        if path.is_symlink() and not real.exists():  # checked first: a dangling link's target may lie anywhere
            raise UnreadableFileError("symlink leads nowhere (its target does not exist)")
        if not real.is_relative_to(base):
            raise UnreadableFileError("symlink leads outside the ingested folder")
        if anchor is None:
            return read_path(real, self.max_bytes)
        top, inside = anchor
        return read_below(top, (*inside, *PurePosixPath(rel).parts), self.max_bytes)


def _anchor(base: Path, files_root: Path | None) -> tuple[Path, tuple[str, ...]] | None:
    """Where ``safe_open.read_below`` starts: the files root and ``base``'s folders below it, else None (no root).

    A folder agrag reads although no user may name it (the data dir's texts, outside the files root or in a hidden
    folder of it) starts at itself.
    """
    if files_root is None:
        return None
    root = check_files_root(files_root)
    inside = base.relative_to(root).parts if base.is_relative_to(root) else (".",)
    return (base, ()) if any(part.startswith(".") for part in inside) else (root, inside)
