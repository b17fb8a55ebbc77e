"""``StructuralChunker``: cuts documents at their headings into section parents and paragraph children."""

from __future__ import annotations

import re
from dataclasses import replace

from haystack import component

from agrag.components import defaults
from agrag.components.chunkers.document_sections import (
    ChunkDraft,
    Section,
    Span,
    TextBlock,
    build_chunks,
    last_space,
    sections,
    table_drafts,
    trim,
)
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import SECTION_CHUNK, Chunk
from agrag.components.data_models.document_structure import TableRegion
from agrag.components.data_models.loaded_document import LoadedDocument

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def paragraph_pieces(text: str, block: TextBlock, max_chars: int) -> list[Span]:
    """Split a text block at paragraph breaks into trimmed spans of at most ``max_chars``.

    Consecutive paragraphs share a span while they fit; a longer paragraph is cut at the last space before the
    limit. A heading line stays with the words after it, never a span of its own.
    """
    spans: list[Span] = []
    bounds = [m.end() for m in _PARAGRAPH_BREAK.finditer(text, block.start, block.end)] + [block.end]
    piece_start = cursor = block.start
    for bound in bounds:
        has_words = trim(text, max(piece_start, block.body_start), cursor) is not None
        if bound - piece_start > max_chars and cursor > piece_start and has_words:
            spans.append((piece_start, cursor))
            piece_start = cursor
        while bound - piece_start > max_chars:
            cut = last_space(text, piece_start + 1, piece_start + max_chars)
            cut = cut if cut > piece_start else piece_start + max_chars
            spans.append((piece_start, cut))
            piece_start = cut
        cursor = bound
    spans.append((piece_start, block.end))
    return [trimmed for span in spans if (trimmed := trim(text, *span))]


@component
class StructuralChunker:
    """Cuts a document at its headings: each section a parent chunk, its paragraphs and table rows the children.

    Reads only the loader's marks (``LoadedDocument.headings`` and ``.tables``), so it works on every format. A
    section runs from its heading to the next heading at any level. Its prose is cut at paragraph breaks into
    ``text`` chunks of at most ``max_chars`` (the first starts with the heading line); each table becomes ``table``
    chunks of at most ``table_max_rows`` body rows, with their cells. A section with more than one child also gets
    a ``section`` chunk spanning all of it (several, over consecutive children, when it is longer than
    ``section_max_chars``), placed just before its children, which name it as their parent. A section with a single
    child gets none: that child's parent is the section chunk of the nearest enclosing section that has one. A
    heading with no body yields nothing. Every chunk's text is exactly ``text[start:end]`` of its version; ``order``
    counts all chunks of the document from 0, so ids never move for one version.

    Usage:
        ```python
        chunks = StructuralChunker(max_chars=1000, section_max_chars=6000).run(documents=loaded)["chunks"]
        passages = [c for c in chunks if c.searchable]
        ```
    """

    def __init__(
        self,
        max_chars: int = defaults.STRUCTURAL_MAX_CHARS,
        section_max_chars: int = defaults.STRUCTURAL_SECTION_MAX_CHARS,
        table_max_rows: int = defaults.TABLE_MAX_ROWS,
    ) -> None:
        if max_chars < 1 or section_max_chars < 1 or table_max_rows < 1:
            raise ComponentConfigError(
                "StructuralChunker",
                f"max_chars, section_max_chars and table_max_rows must be at least 1, got {max_chars}, "
                f"{section_max_chars} and {table_max_rows}",
                "Set ingest.chunker.max_chars, section_max_chars and table_max_rows (or a plan rule's "
                "chunker_options) to positive numbers.",
            )
        self.max_chars = max_chars
        self.section_max_chars = section_max_chars
        self.table_max_rows = table_max_rows

    @component.output_types(chunks=list[Chunk])
    def run(self, documents: list[LoadedDocument]) -> dict[str, list[Chunk]]:
        """Chunk every document; chunks come out in document order, then chunk order."""
        chunks: list[Chunk] = []
        for loaded in documents:
            chunks.extend(self.chunk(loaded))
        return {"chunks": chunks}

    def chunk(self, loaded: LoadedDocument) -> list[Chunk]:
        """Chunk one document version."""
        found = sections(loaded)
        drafts: list[ChunkDraft] = []
        section_chunk: dict[int, int] = {}  # section index -> draft index of its first section chunk
        for index, section in enumerate(found):
            children = self._children(loaded.text, section)
            if not children:
                continue
            enclosing = _enclosing_chunk(found, section_chunk, section.parent)
            if len(children) == 1:
                drafts.append(replace(children[0], parent=enclosing))
                continue
            groups = self._groups(section, children)
            for k, group in enumerate(groups):
                span = trim(loaded.text, section.start if k == 0 else group[0].start, group[-1].end)
                if span is None:  # pragma: no cover - children hold words, so their span does too
                    continue
                parent = len(drafts)
                section_chunk.setdefault(index, parent)
                drafts.append(ChunkDraft(*span, section.path, SECTION_CHUNK, parent=enclosing))
                drafts.extend(replace(child, parent=parent) for child in group)
        return build_chunks(loaded, drafts)

    def _children(self, text: str, section: Section) -> list[ChunkDraft]:
        children: list[ChunkDraft] = []
        for block in section.blocks:
            if isinstance(block, TableRegion):
                children.extend(table_drafts(text, block, section.path, self.table_max_rows))
            else:
                children.extend(
                    ChunkDraft(start, end, section.path) for start, end in paragraph_pieces(text, block, self.max_chars)
                )
        return children

    def _groups(self, section: Section, children: list[ChunkDraft]) -> list[list[ChunkDraft]]:
        """Consecutive children in groups whose span is at most ``section_max_chars`` (a larger child alone)."""
        groups = [[children[0]]]
        group_start = section.start
        for child in children[1:]:
            if child.end - group_start <= self.section_max_chars:
                groups[-1].append(child)
            else:
                groups.append([child])
                group_start = child.start
        return groups


def _enclosing_chunk(found: list[Section], section_chunk: dict[int, int], parent: int | None) -> int | None:
    """Return the draft index of the first section chunk of the nearest enclosing section that has one."""
    while parent is not None:
        if parent in section_chunk:
            return section_chunk[parent]
        parent = found[parent].parent
    return None
