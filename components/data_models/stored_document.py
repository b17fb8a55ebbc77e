"""``StoredDocument``: one document of a data dir as it stands committed, for listings."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.applied_plan import AppliedPlan
from agrag.components.data_models.immutable import Immutable


@dataclass(frozen=True, slots=True)
class StoredDocument(Immutable):
    """A committed document: its id, its current version and where it came from.

    Attributes:
        id: The document id (evidence ids and search filters use it).
        version: Its current, committed version (a prefix of the text's hash).
        title: Its first level-1 heading, else its file name.
        source_path: Its path relative to the folder it was ingested from.
        chunks: How many chunks its current version has.
        source_folder: The folder it was ingested from (relative to ``AGRAG_FILES_ROOT`` when set, else absolute);
            '' for a document stored before agrag recorded it.
        plan: The plan it was ingested with (rule, chunker, extractor, options, reasons); None for a document
            stored before plans were recorded.
    """

    id: str
    version: str
    title: str
    source_path: str
    chunks: int
    source_folder: str = ""
    plan: AppliedPlan | None = None
