"""PDF (``.pdf``): the text layer of every page, read with pypdf."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from agrag.components.loaders.file_failure import UnreadableFileError
from agrag.components.loaders.parsed_document import ParsedDocument
from agrag.components.loaders.text_decoding import normalize_newlines

if TYPE_CHECKING:
    from pypdf import PdfReader

_HEADER_SEARCH_BYTES = 1024


def parse_pdf(raw: bytes, stem: str) -> ParsedDocument:
    """Extract the text of a PDF: the pages' texts joined by blank lines, without trailing spaces.

    A PDF encrypted with an empty user password (only its permissions are locked) is read; one that needs a
    password is not. No headings or tables are marked. The title is the PDF's metadata title, else ``stem``.

    Args:
        raw: The file's bytes.
        stem: The file name without its suffix.

    Raises:
        UnreadableFileError: The file is empty, not a PDF or broken, encrypted, or has no text layer.
    """
    if not raw:
        raise UnreadableFileError("empty file")
    if b"%PDF-" not in raw[:_HEADER_SEARCH_BYTES]:
        raise UnreadableFileError("not a readable PDF: no %PDF- header, so it is no PDF file")
    # imported here: pypdf adds a quarter of a second to every process that loads the ingest flow, most read no PDF
    from pypdf import PdfReader  # noqa: PLC0415
    from pypdf.errors import PyPdfError  # noqa: PLC0415

    try:
        reader = PdfReader(io.BytesIO(raw))
        if reader.is_encrypted and not _opens_without_password(reader):
            raise UnreadableFileError("encrypted PDF; decrypt it first")
        pages = [_clean(page.extract_text()) for page in reader.pages]
        title = _metadata_title(reader)
    except PyPdfError as exc:
        raise UnreadableFileError(f"not a readable PDF: {exc}") from exc
    text = "\n\n".join(page for page in pages if page)
    if not text:
        raise UnreadableFileError("no extractable text (a scanned PDF? run OCR first)")
    return ParsedDocument(text=text, title=title or stem)


def _opens_without_password(reader: PdfReader) -> bool:
    from pypdf import PasswordType  # noqa: PLC0415
    from pypdf.errors import PyPdfError  # noqa: PLC0415

    try:
        return reader.decrypt("") != PasswordType.NOT_DECRYPTED
    except (PyPdfError, NotImplementedError):  # e.g. a cipher pypdf cannot undo
        return False


def _clean(page_text: str) -> str:
    """LF line endings, no NUL characters, no trailing spaces, no blank lines at either end."""
    lines = normalize_newlines(page_text).replace("\x00", "").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def _metadata_title(reader: PdfReader) -> str:
    metadata = reader.metadata
    title = metadata.title if metadata is not None else None
    return str(title).strip() if title else ""
