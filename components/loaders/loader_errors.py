"""Errors of the files root and of listings: a files root that would expose the disk, a folder too big to list."""

from __future__ import annotations

from agrag.components.errors import ConfigError, IngestError


class FilesRootRefusedError(ConfigError):
    """The files root is ``/``, the user's home folder, or a folder holding it: it would expose far more than documents.

    Attributes:
        root: The files root as given.
        resolved: The folder it names, symlinks resolved.
        given_as: Where it was given (``AGRAG_FILES_ROOT``, ``--files-root``).
    """

    def __init__(self, root: str, resolved: str, why: str, given_as: str = "AGRAG_FILES_ROOT") -> None:
        self.root = root
        self.resolved = resolved
        self.given_as = given_as
        named = repr(root) if root == resolved else f"{root!r} ({resolved})"
        super().__init__(
            f"Refusing {named} as the files root ({given_as}): it is {why}, so every file in it (SSH keys, mail, "
            f"shell history, other projects) could be ingested and served. Set {given_as} to a folder that holds only "
            "the documents to ingest, e.g. ~/documents/acme_notes."
        )


class ListingTooLargeError(IngestError):
    """A folder to ingest holds more entries than one listing may walk; nothing was read.

    Attributes:
        folder: The folder, as shown to the user.
        limit: The most entries (files and folders) one listing walks.
    """

    def __init__(self, folder: str, limit: int) -> None:
        self.folder = folder
        self.limit = limit
        super().__init__(
            f"The folder {folder} holds more than {limit:,} files and folders, the most one ingestion lists; nothing "
            "was read. Ingest one of its subfolders at a time, or choose files by path or glob (the `files` of the MCP "
            "`ingest` tool or of the Prefect form, e.g. 'reports/**/*.md')."
        )
