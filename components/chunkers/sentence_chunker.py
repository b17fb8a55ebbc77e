"""``SentenceChunker``: packs whole sentences into chunks, within each section."""

from __future__ import annotations

import re

from haystack import component

from agrag.components import defaults
from agrag.components.chunkers.document_sections import Span, TextBlock, chunk_text_blocks, cut_at_spaces, trim
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.loaded_document import LoadedDocument

# A sentence ends at . ! or ? (and any closing quotes or brackets) followed by white space; whether the next
# character opens a sentence (a capital, a digit, a quote) is checked in code, as ``re`` has no class for capitals.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(\s+)")
_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_OPENERS = "\"'“‘([«"


def sentence_spans(text: str, block: TextBlock, max_chars: int) -> list[Span]:
    """Return the trimmed spans of the sentences of a text block, none longer than ``max_chars``.

    The heading line (``block.start`` to ``block.body_start``) is a sentence of its own; a blank line always ends a
    sentence; a sentence longer than ``max_chars`` is cut at spaces.
    """
    units: list[Span] = []
    if head := trim(text, block.start, block.body_start):
        units.append(head)
    start, end = block.body_start, block.end
    cuts = [
        m.span(1)
        for m in _SENTENCE_END.finditer(text, start, end)
        if m.end(1) < end and (text[m.end(1)].isupper() or text[m.end(1)].isdigit() or text[m.end(1)] in _OPENERS)
    ]
    cuts += [m.span() for m in _BLANK_LINE.finditer(text, start, end)]
    cursor = start
    for stop, resume in sorted(cuts):
        if stop >= cursor:
            units.append((cursor, stop))
            cursor = max(cursor, resume)
    units.append((cursor, end))
    spans: list[Span] = []
    for unit in units:
        if trimmed := trim(text, *unit):
            spans.extend(cut_at_spaces(text, *trimmed, max_chars))
    return spans


def pack(units: list[Span], max_chars: int, overlap: int) -> list[Span]:
    """Pack consecutive units into spans of at most ``max_chars``, repeating ``overlap`` units in the next span.

    Each unit must fit on its own. The overlap shrinks when it would leave no room for a new unit, so every span
    holds at least one unit its predecessor did not.
    """
    spans: list[Span] = []
    first = 0
    while first < len(units):
        last = first
        while last + 1 < len(units) and units[last + 1][1] - units[first][0] <= max_chars:
            last += 1
        spans.append((units[first][0], units[last][1]))
        if last == len(units) - 1:
            break
        first = max(first + 1, last + 1 - overlap)
        while first <= last and units[last + 1][1] - units[first][0] > max_chars:
            first += 1
    return spans


@component
class SentenceChunker:
    """Packs whole sentences into chunks of at most ``max_chars``, never across a heading or a table.

    Reads only the loader's marks (``LoadedDocument.headings`` and ``.tables``). Within each section, the prose
    between tables is split into sentences (at ``.``, ``!`` or ``?`` before white space and a capital, a digit or a
    quote, and at blank lines); consecutive sentences are packed into ``text`` chunks, and the last
    ``overlap_sentences`` of one chunk open the next. A sentence longer than ``max_chars`` is cut at spaces. The
    first chunk of a section starts with its heading line. Tables become ``table`` chunks of at most
    ``table_max_rows`` body rows, with their cells. No section chunks: every ``parent_id`` is None. Every chunk's
    text is exactly ``text[start:end]`` of its version.

    Usage:
        ```python
        chunks = SentenceChunker(max_chars=800, overlap_sentences=1).run(documents=loaded)["chunks"]
        ```
    """

    def __init__(
        self,
        max_chars: int = defaults.SENTENCE_MAX_CHARS,
        overlap_sentences: int = defaults.SENTENCE_OVERLAP_SENTENCES,
        table_max_rows: int = defaults.TABLE_MAX_ROWS,
    ) -> None:
        if max_chars < 1 or overlap_sentences < 0 or table_max_rows < 1:
            raise ComponentConfigError(
                "SentenceChunker",
                f"max_chars and table_max_rows must be at least 1 and overlap_sentences at least 0, got {max_chars}, "
                f"{table_max_rows} and {overlap_sentences}",
                "Fix ingest.chunker.max_chars, table_max_rows or overlap_sentences (or a plan rule's chunker_options).",
            )
        self.max_chars = max_chars
        self.overlap_sentences = overlap_sentences
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
        return pack(sentence_spans(text, block, self.max_chars), self.max_chars, self.overlap_sentences)
