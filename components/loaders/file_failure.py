"""``FileFailure``: a file ingestion did not load, and ``UnreadableFileError``, the reason a parser gives for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FileFailure:
    """A file that was not loaded, and why.

    Attributes:
        source_path: POSIX path relative to the ingested folder.
        reason: What was wrong with the file, in words a user can act on.
    """

    source_path: str
    reason: str


class UnreadableFileError(ValueError):
    """A file's bytes cannot become a document; the loader turns it into a ``FileFailure``.

    Deliberately not an ``AgragError``: it never leaves the loaders, so one bad file never stops an ingestion.

    Attributes:
        reason: What was wrong with the file (for example ``"empty file"``).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
