"""Rebuilds the characters of a span of one document version from the stored chunks that overlap it."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.data_models.chunk import Chunk

GAP = " … "


def span_text(chunks: Sequence[Chunk], start: int, end: int) -> tuple[str, bool]:
    """The text of ``[start, end)`` and whether the chunks cover only part of it.

    Each chunk's text is exactly ``version_text[chunk.start:chunk.end]``, so any chunk covering a character gives it.
    Characters no chunk covers (white space between sections, or a range past the end of the text) make the result
    partial; the covered pieces are joined by `` … ``.
    """
    pieces: list[str] = []
    position, partial = start, False
    for chunk in sorted(chunks, key=lambda c: (c.start, -c.end)):
        if chunk.end <= position or chunk.start >= end:
            continue
        if chunk.start > position:
            partial = True
            if pieces:
                pieces.append(GAP)
            position = chunk.start
        stop = min(chunk.end, end)
        pieces.append(chunk.text[position - chunk.start : stop - chunk.start])
        position = stop
        if position >= end:
            break
    if position < end:
        partial = True
    return "".join(pieces), partial
