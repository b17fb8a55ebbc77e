"""``Chunk``: a passage of one document version, with where it sits."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.closed_set import ClosedSet
from agrag.components.data_models.document_structure import TableCell
from agrag.components.data_models.immutable import Immutable


class ChunkKind(ClosedSet, what="chunk kind"):
    """What a chunk holds: a passage (``text``), a parent section (``section``) or rows of one table (``table``)."""

    TEXT = "text"
    SECTION = "section"
    TABLE = "table"


TEXT_CHUNK = ChunkKind.TEXT  # the names chunkers and readers have always imported
SECTION_CHUNK = ChunkKind.SECTION
TABLE_CHUNK = ChunkKind.TABLE


def chunk_id_for(document_id: str, version: str, order: int) -> str:
    """Return the id of the ``order``-th chunk of one document version; it names the version, so it never moves."""
    return f"{document_id}.{version}.{order}"


def document_id_of(chunk_id: str) -> str:
    """Return the document id a chunk id names (the part before its version)."""
    return chunk_id.split(".", 1)[0]


@dataclass(frozen=True, slots=True)
class Chunk(Immutable):
    """A passage of source text.

    ``text`` is exactly ``version_text[start:end]`` of its document version, so every chunk can be traced back to
    the characters it came from.

    Attributes:
        id: ``<document id>.<version>.<order>``.
        document_id: Id of the document.
        document_version: Version of the document the span refers to.
        text: The passage.
        heading_path: Headings above the passage, outermost first (the document title first for Markdown).
        order: Position of the chunk in its document version, from 0.
        start: Start offset (characters) in the version's text.
        end: End offset (exclusive).
        parent_id: Id of the chunk of the enclosing section, if any.
        title: Title of the document, carried so results can be shown without another lookup.
        kind: ``text`` (a passage: embedded, searched, extracted), ``section`` (a parent: the whole section its
            text children were cut from, stored for context, never embedded) or ``table`` (rows of one table).
        cells: For a table chunk, the address and span (in the version text) of each of its cells.
        current: False once its document has a newer version or was deleted (the chunk stays readable by id).
    """

    id: str
    document_id: str
    document_version: str
    text: str
    heading_path: tuple[str, ...]
    order: int
    start: int
    end: int
    parent_id: str | None = None
    title: str = ""
    kind: ChunkKind = ChunkKind.TEXT
    cells: tuple[TableCell, ...] = ()
    current: bool = True

    @property
    def searchable(self) -> bool:
        """True for the chunks that are embedded, searched and extracted from (text and table chunks)."""
        return self.kind != SECTION_CHUNK

    @property
    def heading(self) -> str:
        """The heading path joined with `` > ``."""
        return " > ".join(self.heading_path)
