"""``FixedSizeChunker``: windows of a fixed size cut at white space, within each section."""

from __future__ import annotations

from haystack import component

from agrag.components import defaults
from agrag.components.chunkers.document_sections import Span, TextBlock, chunk_text_blocks, last_space, trim
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.loaded_document import LoadedDocument


def windows(text: str, start: int, end: int, size: int, overlap: int) -> list[Span]:
    """Return trimmed windows of at most ``size`` characters over ``text[start:end]``.

    Each window ends at the last white space before the limit (a hard cut inside a word longer than the window);
    the next starts ``overlap`` characters before that end, moved forward to the start of a word. Every window
    ends past the previous one, so the loop always finishes.
    """
    span = trim(text, start, end)
    if span is None:
        return []
    position, end = span
    found: list[Span] = []
    previous_end = position
    while end - position > size:
        cut = last_space(text, max(position, previous_end) + 1, position + size)
        cut = cut if cut >= 0 else position + size
        if window := trim(text, position, cut):
            found.append(window)
        following = max(cut - overlap, position + 1)
        while following < cut and not (text[following - 1].isspace() and not text[following].isspace()):
            following += 1
        while following < end and text[following].isspace():
            following += 1
        previous_end, position = cut, following
    if window := trim(text, position, end):
        found.append(window)
    return found


@component
class FixedSizeChunker:
    """Cuts prose into windows of at most ``size`` characters that share about ``overlap`` characters.

    Reads only the loader's marks (``LoadedDocument.headings`` and ``.tables``), and never lets a window cross a
    heading or a table. Windows end at the last white space before the limit (a word longer than ``size`` is cut
    hard); the next window starts ``overlap`` characters before the previous end, moved forward to a word start.
    The first window of a section starts with its heading line. Tables become ``table`` chunks of at most
    ``table_max_rows`` body rows, with their cells. No section chunks: every ``parent_id`` is None. Every chunk's
    text is exactly ``text[start:end]`` of its version.

    Usage:
        ```python
        chunks = FixedSizeChunker(size=1000, overlap=100).run(documents=loaded)["chunks"]
        ```
    """

    def __init__(
        self,
        size: int = defaults.FIXED_SIZE,
        overlap: int = defaults.FIXED_OVERLAP,
        table_max_rows: int = defaults.TABLE_MAX_ROWS,
    ) -> None:
        if size < 1 or table_max_rows < 1 or not 0 <= overlap < size:
            raise ComponentConfigError(
                "FixedSizeChunker",
                f"size and table_max_rows must be at least 1 and overlap in [0, size), got size={size}, "
                f"overlap={overlap}, table_max_rows={table_max_rows}",
                "Fix ingest.chunker.size, overlap or table_max_rows (or a plan rule's chunker_options): overlap must "
                "be smaller than size.",
            )
        self.size = size
        self.overlap = overlap
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
        return chunk_text_blocks(loaded, self._split, self.table_max_rows)

    def _split(self, text: str, block: TextBlock) -> list[Span]:
        return windows(text, block.start, block.end, self.size, self.overlap)
