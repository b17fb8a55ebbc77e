"""Where a loaded document's headings and tables sit in its version text, as the loaders found them.

Loaders understand formats (Markdown, reStructuredText, HTML, PDF, CSV); chunkers only read these marks, so every
chunker works on every format.
"""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.immutable import Immutable


@dataclass(frozen=True, slots=True)
class HeadingMark(Immutable):
    """A heading: the line (or lines, for an underlined heading) ``text[start:end]`` of the version text.

    Attributes:
        start: Offset of the heading's first character.
        end: Offset just past the heading's last line (its body starts here).
        level: 1 for a top-level heading, deeper levels count up.
        text: The heading's words, without markup.
    """

    start: int
    end: int
    level: int
    text: str


@dataclass(frozen=True, slots=True)
class TableCell(Immutable):
    """One cell of a table: its address and its characters ``text[start:end]`` in the version text.

    Attributes:
        row: Row index from 0 (header rows included).
        column: Column index from 0.
        start: Offset of the cell's first character (after trimming white space and delimiters).
        end: Offset just past its last character; equal to ``start`` for an empty cell.
    """

    row: int
    column: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class TableRegion(Immutable):
    """A table: the span ``text[start:end]`` it covers and its cells, row by row.

    Attributes:
        start: Offset of the table's first character.
        end: Offset just past its last character.
        cells: Every cell, in row then column order.
        header_rows: How many leading rows are headers.
        row_spans: ``(start, end)`` of each row's line(s), indexed by row, so a chunker can cut between rows.
    """

    start: int
    end: int
    cells: tuple[TableCell, ...]
    header_rows: int = 1
    row_spans: tuple[tuple[int, int], ...] = ()

    @property
    def row_count(self) -> int:
        """Number of rows, header rows included."""
        return 1 + max((c.row for c in self.cells), default=-1)
