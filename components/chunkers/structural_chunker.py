"""``StructuralChunker``: splits documents by their headings and keeps each passage's heading path."""

from __future__ import annotations

import re
from dataclasses import dataclass

from haystack import component

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.loaded_document import LoadedDocument

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^(```|~~~)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_MARKDOWN_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True, slots=True)
class _Section:
    start: int
    end: int
    path: tuple[str, ...]
    level: int


def _sections(text: str, title: str) -> list[_Section]:
    """Cut Markdown at ATX headings (not inside fenced code); each section runs to the next heading."""
    marks: list[tuple[int, int, str]] = []  # (offset, level, heading)
    offset, in_fence = 0, False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (match := _HEADING.match(line.rstrip("\n"))):
            marks.append((offset, len(match.group(1)), match.group(2).strip()))
        offset += len(line)
    sections: list[_Section] = []
    if not marks or marks[0][0] > 0:
        sections.append(_Section(0, marks[0][0] if marks else len(text), (title,), 0))
    stack: list[tuple[int, str]] = []
    for i, (start, level, heading) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        stack = [(lvl, h) for lvl, h in stack if lvl < level] + [(level, heading)]
        sections.append(_Section(start, end, tuple(h for _, h in stack), level))
    return sections


def _pieces(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` at paragraph breaks into spans of at most ``max_chars``.

    A longer paragraph is cut at the last space before the limit. Leading and trailing white space is left out of
    every span.
    """
    spans: list[tuple[int, int]] = []
    cursor = start
    bounds = [m.end() for m in _PARAGRAPH_BREAK.finditer(text, start, end)] + [end]
    piece_start = cursor
    for bound in bounds:
        if bound - piece_start > max_chars and cursor > piece_start:
            spans.append((piece_start, cursor))
            piece_start = cursor
        while bound - piece_start > max_chars:
            cut = text.rfind(" ", piece_start + 1, piece_start + max_chars)
            cut = cut if cut > piece_start else piece_start + max_chars
            spans.append((piece_start, cut))
            piece_start = cut
        cursor = bound
    spans.append((piece_start, end))
    return [trimmed for span in spans if (trimmed := _trim(text, *span))]


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


@component
class StructuralChunker:
    """Cuts Markdown at its headings and plain text at blank lines.

    Each Markdown section (heading line and body) becomes a chunk whose heading path lists the headings above it,
    and whose parent is the chunk of the enclosing section. A section longer than ``max_chars`` is split at
    paragraph breaks. A heading with no body of its own yields no chunk. Every chunk's text is exactly
    ``text[start:end]`` of its document version.

    Usage:
        ```python
        chunks = StructuralChunker(max_chars=1500).run(documents=loaded)["chunks"]
        ```
    """

    def __init__(self, max_chars: int = 1500) -> None:
        self.max_chars = max_chars

    @component.output_types(chunks=list[Chunk])
    def run(self, documents: list[LoadedDocument]) -> dict[str, list[Chunk]]:
        """Chunk every document; chunks come out in document order, then text order."""
        chunks: list[Chunk] = []
        for loaded in documents:
            chunks.extend(self.chunk(loaded))
        return {"chunks": chunks}

    def chunk(self, loaded: LoadedDocument) -> list[Chunk]:
        """Chunk one document version."""
        doc, text = loaded.document, loaded.text
        if doc.source_path.lower().endswith(_MARKDOWN_SUFFIXES):
            sections = _sections(text, doc.title)
        else:
            sections = [_Section(0, len(text), (doc.title,), 0)]
        chunks: list[Chunk] = []
        first_chunk_of: dict[tuple[str, ...], str] = {}
        for section in sections:
            body_start = text.find("\n", section.start, section.end) if section.level else section.start
            if body_start < 0 or _trim(text, body_start, section.end) is None:
                continue  # a heading with no body of its own
            parent = next(
                (
                    first_chunk_of[section.path[:n]]
                    for n in range(len(section.path) - 1, 0, -1)
                    if section.path[:n] in first_chunk_of
                ),
                None,
            )
            for start, end in _pieces(text, section.start, section.end, self.max_chars):
                order = len(chunks)
                chunk_id = chunk_id_for(doc.id, doc.version, order)
                first_chunk_of.setdefault(section.path, chunk_id)
                chunks.append(
                    Chunk(
                        id=chunk_id,
                        document_id=doc.id,
                        document_version=doc.version,
                        text=text[start:end],
                        heading_path=section.path,
                        order=order,
                        start=start,
                        end=end,
                        parent_id=parent,
                        title=doc.title,
                    )
                )
        return chunks
