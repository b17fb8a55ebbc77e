"""``ParsedDocument``: what a format parser makes of a file, and the line scanner the text parsers share."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from agrag.components.data_models.document_structure import HeadingMark, TableRegion

_LINE = re.compile(r"[^\n]*\n|[^\n]+")
MAX_HEADING_CHARS = 200  # a title or heading text is cut here; the document text keeps it whole


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

    def with_short_headings(self) -> ParsedDocument:
        """This document with its title and heading texts cut to ``MAX_HEADING_CHARS`` (the spans stay whole).

        Every chunk carries its heading path and title, so one 100,000-character heading would otherwise be copied
        into every chunk of its section, into every embedding text and into every search result.
        """
        headings = tuple(
            replace(h, text=short_heading(h.text)) if len(h.text) > MAX_HEADING_CHARS else h for h in self.headings
        )
        return replace(self, title=short_heading(self.title), headings=headings)


def short_heading(text: str) -> str:
    """``text`` cut to at most ``MAX_HEADING_CHARS`` characters, ending with an ellipsis when it was cut."""
    return text if len(text) <= MAX_HEADING_CHARS else text[: MAX_HEADING_CHARS - 1].rstrip() + "…"


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
