"""HTML (``.html``, ``.htm``): a readable text rendering of the page, with its headings and tables marked."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from agrag.components.data_models.document_structure import HeadingMark, TableCell, TableRegion
from agrag.components.loaders.file_failure import UnreadableFileError
from agrag.components.loaders.parsed_document import ParsedDocument
from agrag.components.loaders.text_decoding import decode_text

_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object"})
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_PARAGRAPHS = frozenset(
    "p div section article main header footer nav aside blockquote figure form fieldset address details dl hr".split()
)
_LINES = frozenset({"dt", "dd", "figcaption", "summary", "option", "tr"})
_LISTS = frozenset({"ul", "ol"})
_CELLS = frozenset({"td", "th"})
# Inside a table cell, these start new words; inline tags (b, a, span...) do not.
_SEPARATING = _PARAGRAPHS | _LINES | _LISTS | _CELLS | {"br", "li", "table", "p", *_HEADINGS}
_WHITESPACE = re.compile(r"\s+")
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]+)", re.IGNORECASE)
_CHARSET_SNIFF_BYTES = 64 * 1024


def parse_html(raw: bytes, stem: str) -> ParsedDocument:
    """Render an HTML page as text and mark its headings and tables in that text.

    The rendering: ``h1``..``h6`` become lines ``# Heading`` (as many ``#`` as the level), paragraphs and other
    blocks are separated by blank lines, list items become lines starting ``- ``, ``<br>`` a line break, and a
    table becomes pipe-table lines (``| a | b |``, with a ``|---|`` delimiter after a header row of ``th`` cells
    or in ``thead``) whose cells point at the rendered cell text. Scripts, styles, the head and similar invisible
    parts are left out; entities are decoded and white space inside text collapses to one space. Bytes that are not
    UTF-8 are decoded with the charset a ``<meta>`` tag declares. The title is ``<title>``, else the first ``h1``,
    else ``stem``.

    Args:
        raw: The file's bytes.
        stem: The file name without its suffix.

    Raises:
        UnreadableFileError: The bytes do not decode, or the page shows no text.
    """
    declared = _META_CHARSET.search(raw[:_CHARSET_SNIFF_BYTES])
    source = decode_text(raw, declared.group(1).decode("ascii") if declared else None)
    renderer = _Renderer()
    renderer.feed(source)
    renderer.close()
    text = "".join(renderer.out).rstrip()
    if not text:
        raise UnreadableFileError("no visible text in the HTML page")
    first_h1 = next((h.text for h in renderer.headings if h.level == 1), None)
    return ParsedDocument(
        text=text + "\n",
        title=renderer.title or first_h1 or stem,
        headings=tuple(renderer.headings),
        tables=tuple(renderer.tables),
    )


def _collapsed(parts: list[str]) -> str:
    return _WHITESPACE.sub(" ", "".join(parts)).strip()


@dataclass
class _Table:
    """A table being read: its rows of cell texts, and which rows are header rows."""

    rows: list[list[str]] = field(default_factory=list)
    header: list[bool] = field(default_factory=list)
    cell: list[str] | None = None
    cell_is_header: list[bool] = field(default_factory=list)
    caption: list[str] | None = None
    in_head: bool = False
    nested: int = 0

    def start_row(self) -> None:
        self.end_cell()
        self.rows.append([])
        self.header.append(self.in_head)
        self.cell_is_header = []

    def start_cell(self, tag: str) -> None:
        self.end_cell()
        if not self.rows:
            self.start_row()
        self.cell = []
        self.cell_is_header.append(tag == "th")

    def end_cell(self) -> None:
        if self.cell is not None:
            self.rows[-1].append(_collapsed(self.cell).replace("|", "\\|"))
            self.header[-1] = self.in_head or all(self.cell_is_header)
            self.cell = None


class _Renderer(HTMLParser):
    """Writes the text rendering of a page while it is parsed, recording heading and table offsets."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.headings: list[HeadingMark] = []
        self.tables: list[TableRegion] = []
        self.title = ""
        self._pos = 0
        self._trailing_newlines = 0
        self._pending_break = 0
        self._pending_space = False
        self._prefix = ""
        self._skipped: list[str] = []
        self._in_head = False
        self._title_parts: list[str] | None = None
        self._heading: tuple[int, list[str]] | None = None
        self._table: _Table | None = None
        self._lists = 0
        self._pre = 0

    # -- parser callbacks ---------------------------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Open an element."""
        if self._skipped or tag in _SKIPPED:
            self._skipped += [tag] if tag in _SKIPPED else []
        elif tag in ("head", "body", "title"):
            self._in_head = tag != "body" and (tag == "head" or self._in_head)
            if tag == "title" and not self.title:
                self._title_parts = []
        elif self._table is not None:
            self._table_start(self._table, tag)
        elif tag in _HEADINGS:
            if self._heading is None:
                self._heading = (_HEADINGS[tag], [])
        elif tag == "br":
            self._line_break()
        else:
            self._block_start(tag)

    def handle_endtag(self, tag: str) -> None:
        """Close an element."""
        if self._skipped:
            if tag in self._skipped:
                del self._skipped[len(self._skipped) - 1 - self._skipped[::-1].index(tag) :]
        elif tag in ("head", "title"):
            self._in_head = self._in_head and tag != "head"
            if tag == "title" and self._title_parts is not None:
                self.title, self._title_parts = _collapsed(self._title_parts), None
        elif self._table is not None:
            self._table_end(self._table, tag)
        elif tag in _HEADINGS:
            self._end_heading()
        else:
            self._block_end(tag)

    def handle_data(self, data: str) -> None:
        """Render a text node."""
        if self._title_parts is not None:
            self._title_parts.append(data)
        elif self._skipped or self._in_head:
            return
        elif self._heading is not None:
            self._heading[1].append(data)
        elif self._table is not None:
            parts = self._table.cell if self._table.cell is not None else self._table.caption
            if parts is not None:
                parts.append(data)
        elif self._pre:
            self._flush()
            self._write(data.removeprefix("\n") if self._trailing_newlines else data)
        else:
            self._text(data)

    def close(self) -> None:
        """Finish the rendering, closing a table or heading the page left open."""
        super().close()
        self._end_heading()
        if self._table is not None:
            self._write_table(self._table)

    # -- blocks ---------------------------------------------------------------------------------------------------

    def _block_start(self, tag: str) -> None:
        if tag == "table":
            self._table = _Table()
        elif tag == "li":
            self._break(1)
            self._prefix = "  " * max(self._lists - 1, 0) + "- "
        elif tag in _LISTS:
            self._lists += 1
            self._break(2 if self._lists == 1 else 1)
        elif tag == "pre":
            self._pre += 1
            self._break(2)
        elif tag in _PARAGRAPHS:
            self._break(2)
        elif tag in _LINES:
            self._break(1)

    def _block_end(self, tag: str) -> None:
        if tag == "li":
            self._prefix = ""
            self._break(1)
        elif tag in _LISTS:
            self._lists = max(self._lists - 1, 0)
            self._break(2 if self._lists == 0 else 1)
        elif tag == "pre":
            self._pre = max(self._pre - 1, 0)
            self._break(2)
        elif tag in _PARAGRAPHS:
            self._break(2)
        elif tag in _LINES:
            self._break(1)

    def _end_heading(self) -> None:
        if self._heading is None:
            return
        (level, parts), self._heading = self._heading, None
        words = _collapsed(parts)
        if not words:
            return
        self._break(2)
        self._prefix = ""
        self._flush()
        start = self._pos
        self._write(f"{'#' * level} {words}\n")
        self.headings.append(HeadingMark(start=start, end=self._pos, level=level, text=words))
        self._break(2)

    # -- tables ---------------------------------------------------------------------------------------------------

    def _table_start(self, table: _Table, tag: str) -> None:
        if tag == "table":
            table.nested += 1
        if table.nested:  # a table inside a cell is read as that cell's text
            if table.cell is not None and tag in _SEPARATING:
                table.cell.append(" ")
        elif tag == "tr":
            table.start_row()
        elif tag in _CELLS:
            table.start_cell(tag)
        elif tag == "thead":
            table.in_head = True
        elif tag == "caption":
            table.caption = []
        elif table.cell is not None and tag in _SEPARATING:
            table.cell.append(" ")  # a <br> or a block inside a cell

    def _table_end(self, table: _Table, tag: str) -> None:
        if table.nested:
            if tag == "table":
                table.nested -= 1
        elif tag == "table":
            self._write_table(table)
        elif tag in _CELLS:
            table.end_cell()
        elif tag == "thead":
            table.end_cell()
            table.in_head = False
        elif tag == "caption" and table.caption is not None:
            caption, table.caption = _collapsed(table.caption), None
            self._break(2)
            self._text(caption)

    def _write_table(self, table: _Table) -> None:
        self._table = None
        table.end_cell()
        rows = [(cells, header) for cells, header in zip(table.rows, table.header, strict=True) if cells]
        if not rows:
            return
        width = max(len(cells) for cells, _ in rows)
        header_rows = 1 if rows[0][1] else 0
        self._break(2)
        self._prefix = ""
        self._flush()
        start = self._pos
        marks: list[TableCell] = []
        row_spans: list[tuple[int, int]] = []
        for r, (cells, _) in enumerate(rows):
            row_start = self._pos
            self._write("|")
            for c, cell in enumerate(cells + [""] * (width - len(cells))):
                self._write(" ")
                marks.append(TableCell(row=r, column=c, start=self._pos, end=self._pos + len(cell)))
                self._write(f"{cell} |")
            row_spans.append((row_start, self._pos))
            self._write("\n" + ("|" + "---|" * width + "\n" if r == 0 and header_rows else ""))
        end = row_spans[-1][1]
        self.tables.append(TableRegion(start, end, tuple(marks), header_rows, tuple(row_spans)))
        self._break(2)

    # -- writing --------------------------------------------------------------------------------------------------

    def _break(self, newlines: int) -> None:
        self._pending_break = max(self._pending_break, newlines)

    def _line_break(self) -> None:
        if self._heading is not None:
            self._heading[1].append(" ")
        elif self._pos:
            self._flush()
            self._write("\n")

    def _text(self, data: str) -> None:
        collapsed = _WHITESPACE.sub(" ", data)
        words = collapsed.strip()
        if not words:
            self._pending_space = self._pending_space or bool(collapsed)
            return
        self._pending_space = self._pending_space or collapsed[0] == " "
        self._flush()
        self._write(words)
        self._pending_space = collapsed[-1] == " "

    def _flush(self) -> None:
        """Write the line breaks, space and list marker due before the next text."""
        if self._pos and self._pending_break > self._trailing_newlines:
            self._write("\n" * (self._pending_break - self._trailing_newlines))
        elif self._pending_space and self._pos and not self._trailing_newlines:
            self._write(" ")
        self._pending_break = 0
        self._pending_space = False
        if self._prefix:
            prefix, self._prefix = self._prefix, ""
            self._write(prefix)

    def _write(self, piece: str) -> None:
        if not piece:
            return
        self.out.append(piece)
        self._pos += len(piece)
        stripped = len(piece.rstrip("\n"))
        self._trailing_newlines = self._trailing_newlines + len(piece) if stripped == 0 else len(piece) - stripped
