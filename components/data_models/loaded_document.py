"""``LoadedDocument``: a document version together with its text, as ingestion passes it between stages."""

from __future__ import annotations

from dataclasses import dataclass, field

from agrag.components.data_models.document import Document
from agrag.components.data_models.document_structure import HeadingMark, TableRegion


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """A document version, the exact text its chunk spans refer to, and where its headings and tables sit.

    Attributes:
        document: The version's identity.
        text: The version's text (for HTML and PDF, the text the loader extracted).
        headings: The headings the loader found, in text order.
        tables: The tables the loader found, in text order; they never overlap a heading.
    """

    document: Document
    text: str = field(repr=False)
    headings: tuple[HeadingMark, ...] = ()
    tables: tuple[TableRegion, ...] = ()
