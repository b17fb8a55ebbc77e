"""Markdown (``.md``, ``.markdown``): ATX headings and pipe tables, found outside fenced code blocks."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from agrag.components.data_models.document_structure import HeadingMark, TableCell, TableRegion
from agrag.components.loaders.parsed_document import Line, ParsedDocument, text_lines

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}(?!.*`)|~{3,})")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*))?")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_DELIMITER_CELL = re.compile(r":?-+:?")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def parse_markdown(text: str, stem: str) -> ParsedDocument:
    """Find the headings and tables of a Markdown text.

    Headings are ATX headings (``#`` to ``######``); a heading spans its line and newline. Tables are GitHub pipe
    tables: a header row, a ``|---|`` delimiter row (which is no table row), then body rows up to a line with no
    ``|``. Row spans and the table span end before the newline. The title is the first ``# `` heading, else ``stem``.

    Args:
        text: The decoded, LF-normalized file text; it is the version text.
        stem: The file name without its suffix.
    """
    lines = text_lines(text)
    headings: list[HeadingMark] = []
    tables: list[TableRegion] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if fence is not None:
            fence = None if _closes(line.content, fence) else fence
        elif opened := _FENCE_OPEN.match(line.content):
            fence = opened.group(1)
        elif heading := _heading(line):
            headings.append(heading)
        elif table := _table(lines, i):
            tables.append(table)
            i += len(table.row_spans)  # the header and body rows, plus the delimiter row below
        i += 1
    title = next((h.text for h in headings if h.level == 1), stem)
    return ParsedDocument(text=text, title=title, headings=tuple(headings), tables=tuple(tables))


def _closes(content: str, fence: str) -> bool:
    """Whether ``content`` closes the code block ``fence`` opened: the same character, at least as many."""
    stripped = content.strip()
    indent = len(content) - len(content.lstrip(" "))
    return indent <= 3 and bool(stripped) and set(stripped) == {fence[0]} and len(stripped) >= len(fence)


def _heading(line: Line) -> HeadingMark | None:
    match = _ATX.fullmatch(line.content)
    if match is None:
        return None
    words = _CLOSING_HASHES.sub("", match.group(2) or "").strip()
    if not words:
        return None
    return HeadingMark(start=line.start, end=line.next_start, level=len(match.group(1)), text=words)


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int


def _cells(line: Line) -> list[_Span]:
    """The trimmed cells of a pipe-table row, as absolute offsets; outer pipes are optional."""
    content = line.content
    left = len(content) - len(content.lstrip())
    right = len(content.rstrip())
    if content[left : left + 1] == "|":
        left += 1
    if right > left and content[right - 1] == "|" and content[right - 2 : right - 1] != "\\":
        right -= 1
    bounds = [left - 1, *(m.start() for m in _UNESCAPED_PIPE.finditer(content, left, right)), right]
    spans = []
    for a, b in itertools.pairwise(bounds):
        piece = content[a + 1 : b]
        start = a + 1 + len(piece) - len(piece.lstrip())
        end = max(start, a + 1 + len(piece.rstrip()))
        spans.append(_Span(line.start + start, line.start + end))
    return spans


def _is_delimiter(line: Line, width: int) -> bool:
    cells = _cells(line)
    return len(cells) == width and all(
        _DELIMITER_CELL.fullmatch(line.content[c.start - line.start : c.end - line.start]) for c in cells
    )


def _is_row(line: Line) -> bool:
    return "|" in line.content and not line.blank and _ATX.fullmatch(line.content) is None


def _table(lines: list[Line], i: int) -> TableRegion | None:
    """The pipe table whose header row is ``lines[i]``, or ``None``."""
    if i + 1 >= len(lines) or not _is_row(lines[i]):
        return None
    header = _cells(lines[i])
    if not _is_delimiter(lines[i + 1], len(header)):
        return None
    rows = [lines[i]]
    j = i + 2
    while j < len(lines) and _is_row(lines[j]) and not _FENCE_OPEN.match(lines[j].content):
        rows.append(lines[j])
        j += 1
    cells = tuple(
        TableCell(row=r, column=c, start=span.start, end=span.end)
        for r, row in enumerate(rows)
        for c, span in enumerate(_cells(row))
    )
    return TableRegion(
        start=rows[0].start,
        end=rows[-1].end,
        cells=cells,
        header_rows=1,
        row_spans=tuple((row.start, row.end) for row in rows),
    )
