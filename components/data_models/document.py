"""``Document``: one version of one source file."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

VERSION_LENGTH = 12
DOCUMENT_ID_LENGTH = 16


def content_version(text: str) -> str:
    """Return the version of a text: a prefix of the SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:VERSION_LENGTH]


def document_id_for(source_path: str) -> str:
    """Return the stable id of the document at ``source_path`` (a POSIX path relative to the ingested folder).

    The id depends on the path only, so a changed file keeps its id and gets a new version.
    """
    return "d" + hashlib.sha256(source_path.encode("utf-8")).hexdigest()[: DOCUMENT_ID_LENGTH - 1]


@dataclass(frozen=True, slots=True)
class Document:
    """One version of one source document.

    Attributes:
        id: Stable id derived from the source path; it survives edits of the file.
        version: Prefix of the content hash of this version's text.
        title: The first level-1 heading, else the file name.
        source_path: POSIX path relative to the ingested folder.
    """

    id: str
    version: str
    title: str
    source_path: str
