"""Which folder ``agrag ingest`` may read: any folder, or, with a files root, only folders inside it."""

from __future__ import annotations

from pathlib import Path

from agrag.components.errors import IngestError

_FORMATS = ".md, .txt, .rst, .html, .pdf, .csv"


def resolve_ingest_folder(folder: str, files_root: Path | None) -> Path:
    """Return the resolved folder to ingest.

    Without ``files_root`` any existing folder will do (``~`` is expanded). With one (``AGRAG_FILES_ROOT``, set
    when agrag serves users who must not read the rest of the disk), ``folder`` is taken relative to it, and a
    path that goes through ``..`` or a hidden folder, or that leads outside it (also through a symlink), is refused.

    Args:
        folder: The folder as the user gave it.
        files_root: The only folder ingestion may read below, or ``None`` for no limit.

    Raises:
        IngestError: The folder is refused, or it is not an existing folder.
    """
    if files_root is None:
        base = Path(folder).expanduser()
        if not base.is_dir():
            raise IngestError(_not_a_folder(folder))
        return base.resolve()
    root = files_root.expanduser().resolve()
    if not root.is_dir():
        raise IngestError(f"The files root {str(files_root)!r} (AGRAG_FILES_ROOT) is not a folder. Point it at one.")
    given = Path(folder)
    if ".." in given.parts:
        raise IngestError(_refused(folder, root, "it goes through '..'"))
    candidate = given if given.is_absolute() else root / given
    resolved = candidate.resolve()
    if not resolved.is_relative_to(root):
        raise IngestError(_refused(folder, root, "it leads outside the files root"))
    lexical = candidate.relative_to(root).parts if candidate.is_relative_to(root) else ()
    if any(part.startswith(".") for part in (*lexical, *resolved.relative_to(root).parts)):
        raise IngestError(_refused(folder, root, "it goes through a hidden folder"))
    if not resolved.is_dir():
        raise IngestError(_not_a_folder(folder))
    return resolved


def checked_folder(root: str) -> Path:
    """Return ``root`` resolved, with no files root to stay inside.

    Raises:
        IngestError: ``root`` is not a folder.
    """
    return resolve_ingest_folder(root, None)


def _not_a_folder(folder: str) -> str:
    return f"{folder!r} is not a folder. Give `agrag ingest` a folder of documents ({_FORMATS})."


def _refused(folder: str, root: Path, why: str) -> str:
    return (
        f"Refusing to ingest {folder!r}: {why}. Only folders inside the files root {str(root)!r} (AGRAG_FILES_ROOT) "
        "can be ingested; give a folder inside it, as a path relative to it."
    )
