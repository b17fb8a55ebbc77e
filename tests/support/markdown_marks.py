"""Test-only: a ``LoadedDocument`` with heading and table marks found in a small Markdown string.

Chunkers read only the marks loaders provide; this stands in for a loader so chunker tests can write their input
as Markdown. It knows ATX headings (outside fenced code) and simple pipe tables with a ``|---|`` separator line.
"""

from __future__ import annotations

import itertools
import re

from agrag.components.data_models.document import Document, content_version
from agrag.components.data_models.document_structure import HeadingMark, TableCell, TableRegion
from agrag.components.data_models.loaded_document import LoadedDocument

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^(```|~~~)")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def markdown_document(text: str, path: str = "doc.md", title: str | None = None, doc_id: str = "d1") -> LoadedDocument:
    """Return ``text`` as a loaded document with its headings and pipe tables marked.

    The title is ``title``, else the first level-1 heading, else ``path``.
    """
    lines: list[tuple[int, str]] = []  # (offset, line without its newline)
    offset = 0
    for line in text.splitlines(keepends=True):
        lines.append((offset, line.rstrip("\r\n")))
        offset += len(line)
    headings: list[HeadingMark] = []
    tables: list[TableRegion] = []
    in_fence, i = False, 0
    while i < len(lines):
        start, line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (match := _HEADING.match(line)):
            end = start + len(line) + (1 if start + len(line) < len(text) else 0)
            headings.append(HeadingMark(start, end, len(match.group(1)), match.group(2).strip()))
        elif not in_fence and _is_row(line) and i + 1 < len(lines) and _SEPARATOR.match(lines[i + 1][1]):
            last = i + 2
            while last < len(lines) and _is_row(lines[last][1]):
                last += 1
            end = lines[last - 1][0] + len(lines[last - 1][1])
            tables.append(_table(text, [lines[i], *lines[i + 2 : last]], end))
            i = last
            continue
        i += 1
    first_h1 = next((h.text for h in headings if h.level == 1), None)
    document = Document(doc_id, content_version(text), title or first_h1 or path, path)
    return LoadedDocument(document, text, tuple(headings), tuple(tables))


def _is_row(line: str) -> bool:
    return line.lstrip().startswith("|")


def _table(text: str, rows: list[tuple[int, str]], end: int) -> TableRegion:
    cells: list[TableCell] = []
    for row, (start, line) in enumerate(rows):
        pipes = [start + m.start() for m in re.finditer(r"\|", line)]
        if not line.rstrip().endswith("|"):
            pipes.append(start + len(line))
        for column, (left, right) in enumerate(itertools.pairwise(pipes)):
            cell_start, cell_end = left + 1, right
            while cell_start < cell_end and text[cell_start].isspace():
                cell_start += 1
            while cell_end > cell_start and text[cell_end - 1].isspace():
                cell_end -= 1
            cells.append(TableCell(row, column, cell_start, cell_end))
    return TableRegion(
        start=rows[0][0],
        end=end,
        cells=tuple(cells),
        header_rows=1,
        row_spans=tuple((start, start + len(line)) for start, line in rows),
    )


def pipe_table(body_rows: int) -> str:
    """Return a Markdown pipe table with a header row and ``body_rows`` rows of three cells (``r<i>c<j>``)."""
    lines = ["| Name | Owner | Note |", "|------|-------|------|"]
    lines += [f"| r{i}c0 | r{i}c1 | {'' if i % 7 == 3 else f'r{i}c2'} |" for i in range(1, body_rows + 1)]
    return "\n".join(lines) + "\n"
