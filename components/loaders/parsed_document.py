"""``ParsedDocument``: what a format parser makes of a file, and the line scanner the text parsers share."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agrag.components.data_models.document_structure import HeadingMark, TableRegion

_LINE = re.compile(r"[^\n]*\n|[^\n]+")


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """A file's version text, its title, and where its headings and tables sit in that text.

    Attributes:
        text: The version text; every offset below points into it.
        title: The document's title (a heading or metadata title, else the file name).
        headings: Headings in text order.
        tables: Tables in text order; none overlaps a heading.
    """

    text: str
    title: str
    headings: tuple[HeadingMark, ...] = ()
    tables: tuple[TableRegion, ...] = ()


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a text: ``text[start:end]`` is its content, ``text[start:next_start]`` adds its newline.

    Attributes:
        start: Offset of the line's first character.
        end: Offset just past its content (before the newline).
        next_start: Offset of the next line (after the newline).
        content: ``text[start:end]``.
    """

    start: int
    end: int
    next_start: int
    content: str

    @property
    def blank(self) -> bool:
        """Whether the line holds only white space."""
        return not self.content.strip()


def text_lines(text: str) -> list[Line]:
    """Split ``text`` at LF only (never at the other characters ``str.splitlines`` breaks at), keeping offsets."""
    lines = []
    for match in _LINE.finditer(text):
        content = match.group().removesuffix("\n")
        lines.append(Line(match.start(), match.start() + len(content), match.end(), content))
    return lines
