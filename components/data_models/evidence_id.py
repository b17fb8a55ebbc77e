"""``EvidenceId``: names one chunk or one character span of one version of one document."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.immutable import Immutable
from agrag.components.errors import EvidenceError

# URL-safe: letters, digits, '-', '_' and '.' only. A document id never holds a dot, so the parts split cleanly.
_FORM = re.compile(
    r"(?P<doc>[A-Za-z0-9_-]+)\.(?P<version>[0-9a-f]{6,64})\.(?:c(?P<order>[0-9]+)|s(?P<start>[0-9]+)-(?P<end>[0-9]+))"
)
# Positions are stored as 64-bit integers; a larger number names nothing and the graph store cannot even take it.
MAX_POSITION = 2**63 - 1
_EXAMPLE = "d1f3a9c2b4e5d6f.3b9f0c1d2e4a.c2 (chunk 2) or d1f3a9c2b4e5d6f.3b9f0c1d2e4a.s120-480 (characters 120 to 480)"


@dataclass(frozen=True, slots=True)
class EvidenceId(Immutable):
    """A pointer to evidence that stays valid after its document changes: it names the version it was read from.

    The string form is ``<document id>.<version>.c<order>`` for a chunk and ``<document id>.<version>.s<start>-<end>``
    for the characters ``start`` (inclusive) to ``end`` (exclusive) of that version's text. ``str()`` gives it and
    ``EvidenceId.parse`` reads it back exactly.

    Attributes:
        document_id: The document.
        version: The version: a prefix of the SHA-256 of the version's text.
        order: The chunk's position in that version (None for a span).
        span: ``(start, end)`` character offsets in that version's text (None for a chunk).
    """

    document_id: str
    version: str
    order: int | None = None
    span: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if (self.order is None) == (self.span is None):
            raise EvidenceError("An evidence id names either a chunk (order) or a span (start, end), not both.")
        if self.span is not None and not 0 <= self.span[0] < self.span[1]:
            raise EvidenceError(f"A span needs 0 <= start < end, got {self.span[0]}-{self.span[1]}.")
        too_large = [n for n in (self.order, *(self.span or ())) if n is not None and n > MAX_POSITION]
        if too_large:
            raise EvidenceError(
                f"{str(self)[:120]!r} is not a valid evidence id: {str(too_large[0])[:40]} is larger than any "
                f"position in a document (at most {MAX_POSITION}). Copy the id exactly as a tool returned it."
            )
        if not _FORM.fullmatch(str(self)):
            raise EvidenceError(f"{str(self)!r} is not a valid evidence id; ids look like {_EXAMPLE}.")

    def __str__(self) -> str:
        where = f"c{self.order}" if self.span is None else f"s{self.span[0]}-{self.span[1]}"
        return f"{self.document_id}.{self.version}.{where}"

    @classmethod
    def parse(cls, text: str) -> EvidenceId:
        """Read an id from its string form.

        Raises:
            EvidenceError: saying which part is wrong and what an id looks like.
        """
        value = text.strip()
        match = _FORM.fullmatch(value)
        if match is None:
            raise EvidenceError(f"{text!r} is not an evidence id: {_problem(value)}. Ids look like {_EXAMPLE}.")
        if any(len(n) > len(str(MAX_POSITION)) for n in (match["order"], match["start"], match["end"]) if n):
            raise EvidenceError(  # before int(): thousands of digits would take time, or fail in int() itself
                f"{value[:120]!r} is not a valid evidence id: a position has more digits than any position in a "
                f"document (at most {MAX_POSITION}). Copy the id exactly as a tool returned it."
            )
        if match["order"] is not None:
            return cls(match["doc"], match["version"], order=int(match["order"]))
        start, end = int(match["start"]), int(match["end"])
        if start >= end:
            raise EvidenceError(f"{text!r} is not an evidence id: its span ends at {end}, not after its start {start}.")
        return cls(match["doc"], match["version"], span=(start, end))

    @classmethod
    def of_chunk(cls, chunk: Chunk) -> EvidenceId:
        """The id of a stored chunk."""
        return cls(chunk.document_id, chunk.document_version, order=chunk.order)

    @classmethod
    def of_chunk_id(cls, chunk_id: str) -> EvidenceId:
        """The id of the chunk stored under ``chunk_id`` (``<document id>.<version>.<order>``).

        Raises:
            EvidenceError: ``chunk_id`` is not a stored chunk's id.
        """
        document_id, version, order = [*chunk_id.split("."), "", ""][:3]
        if not re.fullmatch(r"[0-9]{1,19}", order):
            raise EvidenceError(f"{chunk_id!r} is not a chunk id (<document id>.<version>.<order>).")
        return cls(document_id, version, order=int(order))

    @property
    def chunk_id(self) -> str | None:
        """The stored chunk this id names (None for a span)."""
        return None if self.order is None else chunk_id_for(self.document_id, self.version, self.order)


def _problem(value: str) -> str:
    parts = value.split(".")
    if len(parts) != 3:
        return f"it has {len(parts)} dot-separated parts, not 3 (document, version, location)"
    document, version, where = parts
    if not re.fullmatch(r"[A-Za-z0-9_-]+", document):
        return f"the document part {document!r} may hold only letters, digits, '-' and '_'"
    if not re.fullmatch(r"[0-9a-f]{6,64}", version):
        return f"the version part {version!r} must be 6 to 64 lowercase hex digits"
    return f"the location {where!r} must be c<chunk number> or s<start>-<end>"
