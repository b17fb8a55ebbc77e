"""Plain text (``.txt``): the file's text as it is, with no structure."""

from __future__ import annotations

from agrag.components.loaders.parsed_document import ParsedDocument

MAX_TITLE_LINE = 120


def parse_plain_text(text: str, stem: str) -> ParsedDocument:
    """Return a plain text document: its text, and as title a short first line followed by more text, else ``stem``.

    Args:
        text: The decoded, LF-normalized file text.
        stem: The file name without its suffix.
    """
    lines = text.strip().splitlines()
    title = stem
    if len(lines) > 1 and len(first := lines[0].strip()) <= MAX_TITLE_LINE:
        title = first
    return ParsedDocument(text=text, title=title)
