"""``Document``: one version of one source file."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

VERSION_LENGTH = 12
DOCUMENT_ID_LENGTH = 16


def content_version(text: str) -> str:
    """Return the version of a text: a prefix of the SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:VERSION_LENGTH]


def document_id_for(source_path: str, folder: str = "") -> str:
    """Return the stable id of the document at ``source_path`` (POSIX, relative to ``folder``, as ``os`` gave it).

    The id depends on the file's path only, so a changed file keeps its id and gets a new version, and the same
    relative path in two folders gives two documents. A file name that is not UTF-8 reaches Python with its
    undecodable bytes escaped; the id hashes the name's original bytes, so it is stable and differs from any other.

    Args:
        source_path: The file's path relative to the ingested folder.
        folder: The ingested folder's key (``files_root.folder_key``): its path relative to ``AGRAG_FILES_ROOT``
            ('' for the files root itself), else its name. '' also gives the id agrag made before it recorded
            folders, from the relative path alone.
    """
    key = f"{folder.rstrip('/')}/{source_path}" if folder else source_path
    return "d" + hashlib.sha256(os.fsencode(key)).hexdigest()[: DOCUMENT_ID_LENGTH - 1]


def printable_path(path: str) -> str:
    r"""Return ``path`` as text that can be stored and printed: bytes of a name that is not UTF-8 become ``\xNN``.

    A UTF-8 path is returned as it is; any other lone surrogate is written ``\udNNN``.
    """
    try:
        raw = os.fsencode(path)
    except UnicodeEncodeError:  # a surrogate the file system did not make
        raw = path.encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")


@dataclass(frozen=True, slots=True)
class Document:
    """One version of one source document.

    Attributes:
        id: Stable id derived from the source path; it survives edits of the file.
        version: Prefix of the content hash of this version's text.
        title: The first level-1 heading, else the file name.
        source_path: POSIX path relative to the ingested folder (printable: see ``printable_path``).
        source_folder: The folder it was ingested from, relative to ``AGRAG_FILES_ROOT`` when set ('.' for the files
            root itself), else absolute (printable); '' where unknown (a document stored before agrag recorded it).
    """

    id: str
    version: str
    title: str
    source_path: str
    source_folder: str = ""
