"""``LoadedDocument``: a document version together with its text, as ingestion passes it between stages."""

from __future__ import annotations

from dataclasses import dataclass, field

from agrag.components.data_models.document import Document


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """A document version and the exact text its chunk spans refer to."""

    document: Document
    text: str = field(repr=False)
