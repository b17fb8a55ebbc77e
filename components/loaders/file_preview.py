"""A bounded sample from the middle of each file under the files root, a page of files at a time.

For designing an ontology before ingesting: what the files of the files root hold, without reading any of them
whole. A text file (.md, .txt, .rst, .csv, .html) is read only in a window of bytes around its middle (positional
reads, never the rest), decoded leniently and cut at line ends; a CSV sample starts with its header row; an HTML
sample is the text between the tags. A PDF shows the text of its middle page only (pypdf reads the page tree and that
page's content, not the other pages). Files are chosen as ingestion chooses them (``file_selection.select_files``):
paths and globs relative to the files root, nothing outside it, hidden, or of a format agrag does not read.
"""

from __future__ import annotations

import html
import os
import re
import stat
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path, PurePath

from pydantic import BaseModel, ConfigDict, Field

from agrag.components.data_models.paging import MAX_OFFSET
from agrag.components.errors import FileSelectionError, NoFilesRootError, TooManyFilesError
from agrag.components.loaders.file_selection import select_files
from agrag.components.loaders.text_decoding import normalize_newlines
from agrag.components.text_preview_errors import NoPreviewRootError, PreviewError, PreviewRefusedError

MAX_MATCHES = 10_000
MAX_LIMIT = 100
MAX_CHARS = 20_000
MIN_CHARS = 100
LINE_SLACK = 1024  # bytes read beyond the sample's share on each side, so its cuts fall on line ends
HEADER_BYTES = 4096  # the most bytes a CSV header row is looked for in
HTML_FACTOR = 3  # markup takes room: an HTML window is this much wider for the same text
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_HIDDEN_MARKUP = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>|^[^<]*>|<[^>]*$")  # a whole tag, or one cut by the window's edge
_BLANKS = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


class PreviewFormat(StrEnum):
    """How a file is sampled, from its suffix."""

    MARKDOWN = "markdown"
    TEXT = "text"
    RST = "rst"
    CSV = "csv"
    HTML = "html"
    PDF = "pdf"

    @classmethod
    def from_suffix(cls, suffix: str) -> PreviewFormat:
        """The format of a file name ending in ``suffix`` (.md, .markdown, .txt, .rst, .csv, .html, .htm, .pdf)."""
        formats = {".md": cls.MARKDOWN, ".markdown": cls.MARKDOWN, ".txt": cls.TEXT, ".rst": cls.RST}
        formats |= {".csv": cls.CSV, ".html": cls.HTML, ".htm": cls.HTML, ".pdf": cls.PDF}
        found = formats.get(suffix.lower())
        if found is None:
            raise PreviewError(f"No preview reads {suffix!r} files. Formats: {', '.join(sorted(formats))}.")
        return found


class FilePreview(BaseModel):
    """One file of the files root and a sample of its text from the middle."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(..., description="The file, relative to the files root (POSIX).")
    size: int = Field(..., description="Its size in bytes.")
    format: PreviewFormat = Field(..., description="markdown, text, rst, csv, html or pdf.")
    sample: str = Field(..., description="Text from the middle of the file, cut at line ends ('' if none).")
    whole: bool = Field(False, description="True: the sample is the file's whole text (a small file).")
    window: tuple[int, int] = Field((0, 0), description="The bytes read for the sample: [start, end) (text files).")
    page: int | None = Field(None, description="For a PDF: the page shown (1-based) of `pages`.")
    pages: int | None = Field(None, description="For a PDF: how many pages it has.")
    note: str = Field("", description="Why there is no (or a shorter) sample, if so.")


class PreviewPage(BaseModel):
    """One page of previews over the matched files, in path order."""

    model_config = ConfigDict(frozen=True)

    total: int = Field(..., description="How many files the paths and globs matched.")
    offset: int = Field(..., description="How many matched files this page skipped.")
    limit: int = Field(..., description="The most files a page holds.")
    chars: int = Field(..., description="The most characters of a sample.")
    next_offset: int | None = Field(None, description="The offset of the next page; null on the last.")
    files: tuple[FilePreview, ...] = Field((), description="The files of this page, each with its sample.")
    notes: tuple[str, ...] = Field(
        (),
        description="Files the globs met but skipped, each 'path: why' (a symlink leading outside the files root); "
        "the same on every page.",
    )


def preview_files(
    patterns: Sequence[str],
    files_root: Path | None,
    suffixes: Sequence[str],
    *,
    offset: int = 0,
    limit: int = 10,
    chars: int = 2000,
) -> PreviewPage:
    """Sample the middle of each file ``patterns`` match below ``files_root``, one page of files.

    Args:
        patterns: Paths or globs relative to the files root (``**`` for any depth); empty: every file agrag reads.
        files_root: The only folder whose files may be read (``AGRAG_FILES_ROOT``).
        suffixes: The file name endings agrag reads (``ingest.loader.suffixes``).
        offset: Matched files to skip (the next page: the previous page's ``next_offset``; 0 to ``MAX_OFFSET``).
        limit: The most files previewed (1 to ``MAX_LIMIT``).
        chars: The most characters of each sample (``MIN_CHARS`` to ``MAX_CHARS``).

    Raises:
        NoPreviewRootError: there is no files root.
        PreviewRefusedError: a pattern leads outside the files root or is hidden, or matches no file agrag reads,
            or the patterns match more than ``MAX_MATCHES`` files. A glob's match that leads outside the files root
            (a symlinked file or folder) is skipped instead and named in the page's ``notes``, unless every match
            of that glob does.
        PreviewError: ``offset``, ``limit`` or ``chars`` is out of range.

    Usage:
        ```python
        page = preview_files(["**/*.md"], Path("/srv/docs"), (".md",), limit=5, chars=1500)
        page.total, [(f.path, f.sample[:80]) for f in page.files]
        ```
    """
    _check_range("offset", offset, 0, MAX_OFFSET)
    _check_range("limit", limit, 1, MAX_LIMIT)
    _check_range("chars", chars, MIN_CHARS, MAX_CHARS)
    if files_root is None:
        raise NoPreviewRootError()
    try:
        selection = select_files(list(patterns) or ["**/*"], files_root, suffixes, MAX_MATCHES, skip_outside=True)
    except NoFilesRootError as exc:
        raise NoPreviewRootError() from exc
    except TooManyFilesError as exc:
        raise PreviewRefusedError(
            f"The paths match {exc.count} files, more than the {MAX_MATCHES} one preview may match. Narrow the globs."
        ) from exc
    except FileSelectionError as exc:
        raise PreviewRefusedError(str(exc)) from exc
    root = files_root.expanduser().resolve()
    matched = sorted((selection.folder / rel for rel in selection.files), key=lambda p: p.relative_to(root).parts)
    chosen = matched[offset : offset + limit]
    end = offset + len(chosen)
    return PreviewPage(
        total=len(matched),
        offset=offset,
        limit=limit,
        chars=chars,
        next_offset=end if end < len(matched) else None,
        files=tuple(preview_file(path, root, chars) for path in chosen),
        notes=selection.skipped,
    )


def preview_file(path: Path, root: Path, chars: int) -> FilePreview:
    """The preview of one file (already chosen inside ``root``); a file that cannot be read gets a note instead."""
    shown = path.relative_to(root).as_posix()
    kind = PreviewFormat.from_suffix(PurePath(path).suffix)
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:  # vanished, swapped for a symlink after the selection, or not ours to read
        return FilePreview(path=shown, size=0, format=kind, sample="", note=f"could not open: {exc.strerror or exc}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return FilePreview(path=shown, size=0, format=kind, sample="", note="not a regular file")
        if kind is PreviewFormat.PDF:
            return _pdf_preview(fd, shown, info.st_size, chars)
        return _text_preview(fd, shown, info.st_size, kind, chars)
    except OSError as exc:
        return FilePreview(path=shown, size=0, format=kind, sample="", note=f"could not read: {exc.strerror or exc}")
    finally:
        os.close(fd)


def _text_preview(fd: int, shown: str, size: int, kind: PreviewFormat, chars: int) -> FilePreview:
    share = chars * 4 * (HTML_FACTOR if kind is PreviewFormat.HTML else 1)  # UTF-8 takes at most 4 bytes a character
    want = share + 2 * LINE_SLACK
    whole = size <= want
    start = 0 if whole else size // 2 - want // 2
    raw = os.pread(fd, size if whole else want, start)
    end = start + len(raw)
    text = normalize_newlines(raw.decode("utf-8", errors="replace")).replace("\x00", "")
    if start > 0:
        text = _after_first_line_end(text)
    if end < size:
        text = text[: text.rfind("\n") + 1] if "\n" in text else text
    header = ""
    if kind is PreviewFormat.CSV and start > 0:
        first = os.pread(fd, min(size, HEADER_BYTES), 0).decode("utf-8", errors="replace")
        header = first.split("\n", 1)[0].rstrip("\r").lstrip("\ufeff")[: chars // 4]
    if kind is PreviewFormat.HTML:
        text = html.unescape(_TAG.sub(" ", _HIDDEN_MARKUP.sub(" ", text)))
        text = _BLANKS.sub("\n\n", "\n".join(line.strip() for line in text.split("\n")))
    text = text.strip("\n\ufffd")
    budget = chars - (len(header) + 1 if header else 0)
    sample = _middle(text, budget)
    note = "" if sample.strip() else "no text in the middle of the file"
    return FilePreview(
        path=shown,
        size=size,
        format=kind,
        sample=f"{header}\n{sample}" if header else sample,
        whole=whole and len(sample) == len(text),
        window=(start, end),
        note=note,
    )


def _pdf_preview(fd: int, shown: str, size: int, chars: int) -> FilePreview:
    base = {"path": shown, "size": size, "format": PreviewFormat.PDF}
    from pypdf import PdfReader  # noqa: PLC0415 - as in pdf_parser: only a PDF pays for importing pypdf
    from pypdf.errors import PyPdfError  # noqa: PLC0415

    try:
        with os.fdopen(os.dup(fd), "rb") as stream:
            reader = PdfReader(stream, strict=False)
            if reader.is_encrypted:
                return FilePreview(**base, sample="", note="encrypted PDF: no cheap preview (decrypt it first)")
            pages = len(reader.pages)
            if pages == 0:
                return FilePreview(**base, sample="", pages=0, note="a PDF without pages")
            middle = pages // 2
            text = normalize_newlines(reader.pages[middle].extract_text() or "").replace("\x00", "").strip()
    except (PyPdfError, ValueError, KeyError, TypeError, RecursionError) as exc:  # pypdf's ways to fail on a bad PDF
        return FilePreview(**base, sample="", note=f"not a readable PDF: no cheap preview ({type(exc).__name__})")
    note = "" if text else "no text layer on this page (a scanned PDF? run OCR first)"
    sample = _middle(text, chars)
    return FilePreview(
        **base, sample=sample, whole=pages == 1 and sample == text, page=middle + 1, pages=pages, note=note
    )


def _after_first_line_end(text: str) -> str:
    cut = text.find("\n")
    return text[cut + 1 :] if cut >= 0 else text


def _middle(text: str, chars: int) -> str:
    """At most ``chars`` characters from the middle of ``text``, cut at line ends where the text has some."""
    if len(text) <= chars:
        return text
    start = (len(text) - chars) // 2
    piece = text[start : start + chars]
    head = piece.find("\n")
    tail = piece.rfind("\n")
    if 0 <= head < tail:
        piece = piece[head + 1 : tail]
    return piece.strip("\n")


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        bounds = f"from {low} to {high:,}"
        raise PreviewError(f"The preview's {name} must be {bounds}, not {value}. Give a value in that range.")
