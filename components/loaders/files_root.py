"""Which folder ``agrag ingest`` may read: any folder, or, with a files root, only folders inside it."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from agrag.components.data_models.ingestion_run import RunSource
from agrag.components.errors import EmptyIngestPathError, IngestError
from agrag.components.loaders.loader_errors import FilesRootRefusedError

_FORMATS = ".md, .txt, .rst, .html, .pdf, .csv"
TEXTS_FOLDER = "mcp_texts"
"""The data dir's folder of texts clients handed to the ``ingest`` tool (one file per document name): ingestible
whatever the files root, since agrag itself wrote everything in it."""


def check_files_root(files_root: Path, given_as: str = "AGRAG_FILES_ROOT") -> Path:
    """Return ``files_root`` resolved, unless it is ``/``, the user's home folder or a folder that holds it.

    Symlinks are resolved first, so a link to ``/`` or to the home folder is refused too. The home folder is both
    ``$HOME`` and the account's home in the password database, where they differ.

    Args:
        files_root: The files root as given (``~`` is expanded).
        given_as: Where it was given, for the message (``AGRAG_FILES_ROOT``, ``--files-root``).

    Raises:
        FilesRootRefusedError: It would expose the whole disk or the home folder.
    """
    try:
        root = files_root.expanduser().resolve()
    except (OSError, RuntimeError):  # no home to expand, a symlink loop: the folder checks that follow say so
        return files_root
    why = None
    if root == Path(root.anchor):
        why = "the root of the file system"
    for home in _homes():
        if root == home:
            why = "your home folder"
        elif why is None and home.is_relative_to(root):
            why = f"a folder that holds your home folder ({home})"
    if why is not None:
        raise FilesRootRefusedError(str(files_root), str(root), why, given_as)
    return root


def _homes() -> set[Path]:
    """The user's home folders, resolved: ``$HOME`` and the password database's (either may be missing)."""
    found: set[Path] = set()
    for home in (os.environ.get("HOME"), _account_home()):
        if home:
            try:
                found.add(Path(home).resolve())
            except (OSError, RuntimeError):
                continue
    return found


def _account_home() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:  # a uid with no account (some containers)
        return None


def resolve_ingest_folder(folder: str, files_root: Path | None, source: RunSource = RunSource.CLI) -> Path:
    """Return the resolved folder to ingest.

    Without ``files_root`` any existing folder will do (``~`` is expanded). With one (``AGRAG_FILES_ROOT``, set
    when agrag serves users who must not read the rest of the disk), ``folder`` is taken relative to it, and a
    path that goes through ``..`` or a hidden folder, or that leads outside it (also through a symlink), is refused.

    Args:
        folder: The folder as the user gave it.
        files_root: The only folder ingestion may read below, or ``None`` for no limit.
        source: Who asked; the messages name where the folder was given (``agrag ingest``, the Prefect form's field
            ``folder``, the request's ``folder``).

    Raises:
        EmptyIngestPathError: ``folder`` is empty (it would mean the current folder, or the whole files root).
        IngestError: The folder is refused, or it is not an existing folder.
        FilesRootRefusedError: ``files_root`` is ``/``, the home folder or a folder holding it.
    """
    if files_root is not None:
        check_files_root(files_root)
    if not folder.strip():
        raise EmptyIngestPathError()
    try:
        return _resolved(folder, files_root, source)
    except (OSError, RuntimeError, ValueError) as exc:  # a name too long, a symlink loop, a NUL byte
        raise IngestError(_refused(folder, files_root, f"the path cannot be read ({exc})", source)) from exc


def _resolved(folder: str, files_root: Path | None, source: RunSource) -> Path:
    if files_root is None:
        base = Path(folder).expanduser()
        if not base.is_dir():
            raise IngestError(_not_a_folder(folder, source))
        return base.resolve()
    root = files_root.expanduser().resolve()
    if not root.is_dir():
        raise IngestError(f"The files root {str(files_root)!r} (AGRAG_FILES_ROOT) is not a folder. Point it at one.")
    given = Path(folder)
    if ".." in given.parts:
        raise IngestError(_refused(folder, root, "it goes through '..'", source))
    candidate = given if given.is_absolute() else root / given
    resolved = candidate.resolve()
    if not resolved.is_relative_to(root):
        raise IngestError(_refused(folder, root, "it leads outside the files root", source))
    lexical = candidate.relative_to(root).parts if candidate.is_relative_to(root) else ()
    if any(part.startswith(".") for part in (*lexical, *resolved.relative_to(root).parts)):
        raise IngestError(_refused(folder, root, "it goes through a hidden folder", source))
    if not resolved.is_dir():
        raise IngestError(_not_a_folder(folder, source))
    return resolved


def folder_key(folder: Path, files_root: Path | None) -> str:
    """The ingested ``folder``'s part of its documents' ids: its path relative to ``files_root``, else its name.

    Ids so survive moving the folder (or the files root) and differ between folders of other names;
    ``claim_documents`` refuses what would still collide (two folders of one name). '' is the files root itself.
    """
    resolved = folder.resolve()
    root = files_root.expanduser().resolve() if files_root is not None else None
    if root is not None and resolved.is_relative_to(root):
        inside = resolved.relative_to(root)
        return "" if inside == Path() else inside.as_posix()
    return resolved.name


def source_folder(folder: Path, files_root: Path | None) -> str:
    """Where a document came from, as stored: relative to ``files_root`` ('.' for itself), else the absolute path."""
    resolved = folder.resolve()
    root = files_root.expanduser().resolve() if files_root is not None else None
    if root is not None and resolved.is_relative_to(root):
        return resolved.relative_to(root).as_posix()
    return resolved.as_posix()


def checked_folder(root: str) -> Path:
    """Return ``root`` resolved, with no files root to stay inside.

    Raises:
        IngestError: ``root`` is not a folder.
    """
    return resolve_ingest_folder(root, None)


def _give(source: RunSource, what: str) -> str:
    """How to ask for another folder, where the folder was given: the CLI, the Prefect form or the HTTP request."""
    if source == RunSource.PREFECT:
        return f"set the form's field `folder` to {what}"
    if source == RunSource.HTTP:
        return f"set `folder` in the request to {what}"
    return f"give `agrag ingest` {what}"


def _not_a_folder(folder: str, source: RunSource) -> str:
    where = {RunSource.PREFECT: " on the machine that runs the ingestion", RunSource.HTTP: " on the server"}
    ask = _give(source, f"a folder of documents ({_FORMATS})")
    return f"{folder!r} is not a folder{where.get(source, '')}. {ask[0].upper()}{ask[1:]}."


def _refused(folder: str, root: Path | None, why: str, source: RunSource) -> str:
    if root is None:
        return f"Refusing to ingest {folder!r}: {why}. {_give(source, 'a folder of documents')}."
    return (
        f"Refusing to ingest {folder!r}: {why}. Only folders inside the files root {str(root)!r} (AGRAG_FILES_ROOT) "
        f"can be ingested; {_give(source, 'a folder inside it, as a path relative to it')}."
    )
