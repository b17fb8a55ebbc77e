"""Errors of text ingest (a text handed to agrag under a name) and of the files preview.

They subclass the classes of ``components/errors.py``, so a caller that catches ``IngestError`` (or the API's status
mapping, 400 for an ``IngestError``) treats them as it treats other ingestion mistakes.
"""

from __future__ import annotations

from agrag.components.errors import FileSelectionError, IngestError


class TextIngestError(IngestError):
    """A text could not be ingested as given (its name, its text or its title); nothing was written."""


class BadTextNameError(TextIngestError):
    """A text's document name has characters or a length agrag does not take."""

    def __init__(self, name: str, why: str, rule: str) -> None:
        self.name = name
        self.why = why
        super().__init__(
            f"{name[:120]!r} cannot name a text: {why}. A text's name is {rule}, e.g. 'meeting-2026-11-30' or "
            "'notes.md'. Give another name."
        )


class BadTextError(TextIngestError):
    """The text itself (or its title) cannot be ingested: empty, too long, or a title that is not one short line."""

    def __init__(self, what: str, fix: str) -> None:
        self.what = what
        super().__init__(f"The text cannot be ingested: {what}. {fix}")


class TextOverFileError(TextIngestError):
    """A text's name leads to a document read from a file of a folder, which a text may never overwrite."""

    def __init__(self, name: str, document_id: str, file: str) -> None:
        self.name = name
        self.document_id = document_id
        self.file = file
        super().__init__(
            f"Refusing to store the text {name[:120]!r}: it would overwrite document {document_id}, which was read "
            f"from the file {file}; a text never replaces a file's document (change the file and ingest it again "
            f"instead). Give the text another name, e.g. {_other_name(name)!r}."
        )


class PreviewError(FileSelectionError):
    """Files of the files root could not be previewed (no files root, a path outside it, too many matches)."""


class PreviewRefusedError(PreviewError):
    """A path or glob given to the preview was refused, or matched nothing; the message is the selection's own."""

    def __init__(self, message: str) -> None:
        super().__init__(
            message.replace("Refusing to ingest", "Refusing to preview", 1)
            .replace("can be ingested", "can be previewed", 1)
            .replace("one call may ingest", "one preview may match", 1)
        )


class NoPreviewRootError(PreviewError):
    """A preview was asked for, but there is no files root to read below."""

    def __init__(self) -> None:
        super().__init__(
            "Previewing files needs a files root, the only folder whose files may be read: start the server with "
            "--files-root FOLDER (or set AGRAG_FILES_ROOT)."
        )


def _other_name(name: str) -> str:
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}-notes.{suffix}" if dot and stem else f"{name}-notes"


class ScopedPreviewError(PreviewError):
    """A caller limited to some documents asked for a preview of files, which may hold any document's text."""

    def __init__(self) -> None:
        super().__init__(
            "Previewing files reads the files root, not the graph, so a token limited to documents may not do it. "
            "Use a token that may read every document, or ask the server's operator for the preview."
        )
