"""The format-free groundwork every chunker shares: sections, their blocks, table pieces and chunk ids.

Loaders mark where headings and tables sit (``LoadedDocument.headings`` and ``.tables``); nothing here parses a
format. A section runs from one heading to the next heading at any level; inside it, text runs and tables are
separate blocks, so no chunk ever crosses a heading or mixes prose with table rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agrag.components.data_models.chunk import TABLE_CHUNK, TEXT_CHUNK, Chunk, ChunkKind, chunk_id_for
from agrag.components.data_models.document_structure import TableCell, TableRegion
from agrag.components.data_models.loaded_document import LoadedDocument

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class TextBlock:
    """A run of prose inside a section: ``text[start:end]``.

    Attributes:
        start: Offset of the run; for the first run of a section, the start of its heading line.
        end: Offset just past the run.
        body_start: Where the run's own words begin: past the heading for the first run of a section, else
            ``start``. A chunk must not end before it, so a heading line is never a chunk of its own.
    """

    start: int
    end: int
    body_start: int


Block = TextBlock | TableRegion


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and its body up to the next heading at any level (or the text before the first heading).

    Attributes:
        start: Offset of the heading line (0 for the text before the first heading).
        end: Offset of the next heading, or the end of the text.
        level: The heading's level; 0 for the text before the first heading.
        path: Titles of the enclosing headings, outermost first, ending with this one's.
        parent: Index (in the document's section list) of the directly enclosing section, if any.
        blocks: Its text runs and tables in text order; empty for a heading with no body.
    """

    start: int
    end: int
    level: int
    path: tuple[str, ...]
    parent: int | None
    blocks: tuple[Block, ...]


@dataclass(frozen=True, slots=True)
class TablePiece:
    """Whole rows of one table: ``text[start:end]`` and the cells inside it, with their original addresses."""

    start: int
    end: int
    cells: tuple[TableCell, ...]


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A chunk before it has an id: its span, heading path, kind and the index of its parent draft."""

    start: int
    end: int
    heading_path: tuple[str, ...]
    kind: ChunkKind = TEXT_CHUNK
    cells: tuple[TableCell, ...] = ()
    parent: int | None = None


def trim(text: str, start: int, end: int) -> Span | None:
    """Return ``(start, end)`` without leading and trailing white space, or None when nothing else is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def last_space(text: str, low: int, high: int) -> int:
    """Return the offset of the last white space character in ``text[low:high + 1]``, or -1 if there is none."""
    for offset in range(min(high, len(text) - 1), low - 1, -1):
        if text[offset].isspace():
            return offset
    return -1


def cut_at_spaces(text: str, start: int, end: int, max_chars: int) -> list[Span]:
    """Cut ``text[start:end]`` into trimmed spans of at most ``max_chars``, at the last space before each limit.

    A word longer than ``max_chars`` is cut hard at the limit.
    """
    spans: list[Span] = []
    while end - start > max_chars:
        cut = last_space(text, start + 1, start + max_chars)
        cut = cut if cut > start else start + max_chars
        spans.append((start, cut))
        start = cut
    spans.append((start, end))
    return [trimmed for span in spans if (trimmed := trim(text, *span))]


def sections(loaded: LoadedDocument) -> list[Section]:
    """Return the sections of a document in text order, with their heading paths and blocks.

    Text before the first heading (all the text when there is none) is a section whose path is the document
    title; it encloses no other section.
    """
    text, headings = loaded.text, sorted(loaded.headings, key=lambda h: h.start)
    found: list[Section] = []
    first = headings[0].start if headings else len(text)
    if first > 0 or not headings:
        found.append(Section(0, first, 0, (loaded.document.title,), None, _blocks(loaded, 0, first, 0)))
    stack: list[tuple[int, int]] = []  # (level, section index) of the headings enclosing the next one
    for i, heading in enumerate(headings):
        end = headings[i + 1].start if i + 1 < len(headings) else len(text)
        stack = [entry for entry in stack if entry[0] < heading.level]
        parent = stack[-1][1] if stack else None
        path = (*found[parent].path, heading.text) if parent is not None else (heading.text,)
        body_start = min(max(heading.end, heading.start), end)
        stack.append((heading.level, len(found)))
        found.append(
            Section(heading.start, end, heading.level, path, parent, _blocks(loaded, heading.start, end, body_start))
        )
    return found


def _blocks(loaded: LoadedDocument, start: int, end: int, body_start: int) -> tuple[Block, ...]:
    """Split ``text[start:end]`` into text runs and the tables that start inside it; drop runs with no words."""
    text = loaded.text
    blocks: list[Block] = []
    cursor = start
    for table in sorted((t for t in loaded.tables if start <= t.start < end), key=lambda t: t.start):
        blocks.extend(_text_block(text, cursor, table.start, body_start))
        blocks.append(table)
        cursor = max(cursor, table.end)
    blocks.extend(_text_block(text, cursor, end, body_start))
    return tuple(blocks)


def _text_block(text: str, start: int, end: int, body_start: int) -> list[TextBlock]:
    own = max(start, body_start)
    return [TextBlock(start, end, own)] if own < end and trim(text, own, end) else []


def table_pieces(text: str, table: TableRegion, max_rows: int) -> list[TablePiece]:
    """Cut a table into pieces of at most ``max_rows`` body rows; the header rows go with the first piece only.

    Every piece is one contiguous, trimmed span of whole row lines, and carries the cells of its rows with their
    original row and column indexes and absolute offsets.
    """
    rows = _row_spans(text, table)
    if not rows:
        span = trim(text, table.start, table.end)
        return [TablePiece(*span, table.cells)] if span else []
    header = [row for row in rows if row[0] < table.header_rows]
    body = [row for row in rows if row[0] >= table.header_rows]
    groups = [body[i : i + max_rows] for i in range(0, len(body), max_rows)] or [[]]
    groups[0] = header + groups[0]
    cells_of: dict[int, list[TableCell]] = {}
    for cell in table.cells:  # grouped once: a 50,000-row CSV must not rescan every cell for every piece
        cells_of.setdefault(cell.row, []).append(cell)
    pieces: list[TablePiece] = []
    for k, group in enumerate(groups):
        start = table.start if k == 0 else group[0][1]
        end = table.end if k == len(groups) - 1 else group[-1][2]
        if span := trim(text, start, end):
            numbers = sorted({row[0] for row in group})
            pieces.append(TablePiece(*span, tuple(c for row in numbers for c in cells_of.get(row, ()))))
    return pieces


def _row_spans(text: str, table: TableRegion) -> list[tuple[int, int, int]]:
    """Return ``(row, start, end)`` of each row: the loader's row spans, else the lines its cells sit on."""
    if table.row_spans and len(table.row_spans) == table.row_count:
        return [(row, start, end) for row, (start, end) in enumerate(table.row_spans)]
    by_row: dict[int, list[TableCell]] = {}
    for cell in table.cells:
        by_row.setdefault(cell.row, []).append(cell)
    spans: list[tuple[int, int, int]] = []
    for row in sorted(by_row):
        first = min(c.start for c in by_row[row])
        last = max(c.end for c in by_row[row])
        line_end = text.find("\n", last, table.end)
        spans.append((row, max(table.start, text.rfind("\n", 0, first) + 1), table.end if line_end < 0 else line_end))
    return spans


def table_drafts(
    text: str, table: TableRegion, path: tuple[str, ...], max_rows: int, parent: int | None = None
) -> list[ChunkDraft]:
    """Return one table chunk draft per piece of ``table`` (see ``table_pieces``)."""
    return [
        ChunkDraft(piece.start, piece.end, path, TABLE_CHUNK, piece.cells, parent)
        for piece in table_pieces(text, table, max_rows)
    ]


def build_chunks(loaded: LoadedDocument, drafts: list[ChunkDraft]) -> list[Chunk]:
    """Turn drafts into chunks: ``order`` is the draft's index, ids are ``chunk_id_for(doc.id, doc.version, order)``."""
    doc, text = loaded.document, loaded.text
    ids = [chunk_id_for(doc.id, doc.version, order) for order in range(len(drafts))]
    return [
        Chunk(
            id=ids[order],
            document_id=doc.id,
            document_version=doc.version,
            text=text[draft.start : draft.end],
            heading_path=draft.heading_path,
            order=order,
            start=draft.start,
            end=draft.end,
            parent_id=None if draft.parent is None else ids[draft.parent],
            title=doc.title,
            kind=draft.kind,
            cells=draft.cells,
        )
        for order, draft in enumerate(drafts)
    ]


def chunk_text_blocks(
    loaded: LoadedDocument, split: Callable[[str, TextBlock], list[Span]], table_max_rows: int
) -> list[Chunk]:
    """Chunk a document section by section with no parent chunks: text blocks by ``split``, tables by rows."""
    drafts: list[ChunkDraft] = []
    for section in sections(loaded):
        for block in section.blocks:
            if isinstance(block, TableRegion):
                drafts.extend(table_drafts(loaded.text, block, section.path, table_max_rows))
            else:
                drafts.extend(ChunkDraft(start, end, section.path) for start, end in split(loaded.text, block))
    return build_chunks(loaded, drafts)
