"""reStructuredText (``.rst``): adorned section titles and grid tables."""

from __future__ import annotations

import re

from agrag.components.data_models.document_structure import HeadingMark, TableCell, TableRegion
from agrag.components.loaders.parsed_document import Line, ParsedDocument, text_lines

_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1+[ \t]*")
_GRID_BORDER = re.compile(r"[ \t]*\+(?:[-=]+\+)+[ \t]*")


def parse_rst(text: str, stem: str) -> ParsedDocument:
    """Find the section titles and grid tables of a reStructuredText text.

    A section title is a line underlined, and optionally overlined, with one punctuation character repeated at
    least as long as the title. As in docutils, levels follow the order in which each adornment style (character,
    with or without overline) first appears. A heading spans from its overline or title line to just past its
    underline's newline. Grid tables without merged cells become tables; their header rows are those above a
    ``+===+`` border. The title is the first section title, else ``stem``.

    Args:
        text: The decoded, LF-normalized file text; it is the version text.
        stem: The file name without its suffix.
    """
    lines = text_lines(text)
    styles: list[tuple[str, bool]] = []
    headings: list[HeadingMark] = []
    tables: list[TableRegion] = []
    i = 0
    while i < len(lines):
        follows_break = i == 0 or lines[i - 1].blank or bool(headings and headings[-1].end == lines[i].start)
        found = _section_title(lines, i) if follows_break else None
        if found is not None:
            style, words, used = found
            if style not in styles:
                styles.append(style)
            end = lines[i + used - 1].next_start
            headings.append(HeadingMark(start=lines[i].start, end=end, level=styles.index(style) + 1, text=words))
            i += used
        elif (grid := _grid_table(lines, i)) is not None:
            tables.append(grid[0])
            i += grid[1]
        else:
            i += 1
    title = headings[0].text if headings else stem
    return ParsedDocument(text=text, title=title, headings=tuple(headings), tables=tuple(tables))


def _adornment(line: Line) -> str | None:
    """The repeated character if ``line`` is an adornment line, else ``None``."""
    return line.content[0] if _ADORNMENT.fullmatch(line.content) else None


def _width(line: Line) -> int:
    return len(line.content.rstrip())


def _section_title(lines: list[Line], i: int) -> tuple[tuple[str, bool], str, int] | None:
    """``(style, title words, lines used)`` for a section title starting at ``lines[i]``, else ``None``."""
    first = lines[i]
    over = _adornment(first)
    if over is not None and i + 2 < len(lines):
        title, under = lines[i + 1], lines[i + 2]
        if (
            not title.blank
            and _adornment(title) is None
            and _adornment(under) == over
            and _width(under) == _width(first) >= _width(title)
        ):
            return (over, True), title.content.strip(), 3
        return None
    if over is not None or first.blank or first.content[0] in " \t" or i + 1 >= len(lines):
        return None
    under_char = _adornment(lines[i + 1])
    if under_char is None or _width(lines[i + 1]) < _width(first):
        return None
    return (under_char, False), first.content.strip(), 2


def _grid_table(lines: list[Line], i: int) -> tuple[TableRegion, int] | None:
    """The grid table whose top border is ``lines[i]`` and its line count, or ``None`` (also with merged cells)."""
    top = lines[i]
    if not _GRID_BORDER.fullmatch(top.content):
        return None
    indent = len(top.content) - len(top.content.lstrip())
    columns = [n for n, char in enumerate(top.content) if char == "+"]
    block = [top]
    for line in lines[i + 1 :]:
        if line.content[indent : indent + 1] not in ("+", "|") or line.content[:indent].strip():
            break
        block.append(line)
    if len(block) < 3 or not _GRID_BORDER.fullmatch(block[-1].content):
        return None
    groups: list[list[Line]] = [[]]
    header_rows = 0
    for line in block[1:]:
        if _GRID_BORDER.fullmatch(line.content):
            if [n for n, char in enumerate(line.content) if char == "+"] != columns or not groups[-1]:
                return None  # merged cells or an empty row
            header_rows = len(groups) if "=" in line.content and not header_rows else header_rows
            groups.append([])
        elif any(line.content[n : n + 1] != "|" for n in columns):
            return None
        else:
            groups[-1].append(line)
    rows = groups[:-1]
    cells = tuple(
        _cell(row_lines, r, c, columns[c], columns[c + 1])
        for r, row_lines in enumerate(rows)
        for c in range(len(columns) - 1)
    )
    table = TableRegion(
        start=top.start + indent,
        end=block[-1].start + _width(block[-1]),
        cells=cells,
        header_rows=header_rows,
        row_spans=tuple(
            (row_lines[0].start + indent, row_lines[-1].start + _width(row_lines[-1])) for row_lines in rows
        ),
    )
    return table, len(block)


def _cell(row_lines: list[Line], row: int, column: int, left: int, right: int) -> TableCell:
    """A cell from its first to its last character; a cell over several lines spans the lines between, too."""
    pieces = []
    for line in row_lines:
        piece = line.content[left + 1 : right]
        if piece.strip():
            start = left + 1 + len(piece) - len(piece.lstrip())
            pieces.append((line.start + start, line.start + left + 1 + len(piece.rstrip())))
    if not pieces:
        empty = row_lines[0].start + left + 1
        return TableCell(row=row, column=column, start=empty, end=empty)
    return TableCell(row=row, column=column, start=pieces[0][0], end=pieces[-1][1])
