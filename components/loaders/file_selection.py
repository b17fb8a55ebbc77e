"""Which files of the files root an ingestion of chosen files reads: paths and globs, each resolved and checked.

A client (the MCP ``ingest`` tool) names files by paths or globs relative to ``AGRAG_FILES_ROOT``. Every match is
resolved (symlinks included) and refused unless it lies inside the root, is no hidden file or below a hidden folder,
and has a suffix agrag reads. The files then become one ingestion of their deepest common folder, limited to them
(``FolderLoader.run(files=...)``), so their document ids are the ones a whole-folder ingestion gives them: the path
relative to the files root (``files_root.folder_key``).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from agrag.components.errors import (
    FileOutsideRootError,
    IngestError,
    NoFilesMatchedError,
    NoFilesRootError,
    TooManyFilesError,
)

MAX_FILES = 50
GLOB_CHARACTERS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class FileSelection:
    """Chosen files as one ingestion run: a folder inside the files root and files below it.

    Attributes:
        folder: The deepest folder holding every chosen file (resolved, inside the files root).
        files: The chosen files as POSIX paths relative to ``folder``, sorted, each once.
        skipped: With ``skip_outside``, the glob matches left out because they lead outside the files root, each
            ``"path: why"`` (the path as the glob found it, relative to the root), in the order found.
    """

    folder: Path
    files: tuple[str, ...]
    skipped: tuple[str, ...] = ()


def select_files(
    patterns: Sequence[str],
    files_root: Path | None,
    suffixes: Sequence[str],
    max_files: int = MAX_FILES,
    *,
    skip_outside: bool = False,
) -> FileSelection:
    """Resolve ``patterns`` (paths or globs relative to ``files_root``) to the files one ingestion reads.

    A glob skips folders, hidden files and files of other suffixes; a plain path naming one of those is refused.
    Two patterns naming one file (or a symlink and its target) give it once, under its real path.

    Args:
        patterns: Paths or globs (``*``, ``?``, ``[...]``, ``**`` for any depth), relative to the files root.
        files_root: ``AGRAG_FILES_ROOT``; None refuses every pattern.
        suffixes: The file name endings agrag reads (``.md``, ...).
        max_files: The most files one selection may hold.
        skip_outside: A glob's match that leads outside the root (a symlinked file or folder) is left out and named
            in ``FileSelection.skipped`` instead of refusing the whole selection (a preview of the whole root).
            A plain path that leads outside, and a glob all of whose matches do, are still refused.

    Raises:
        NoFilesRootError: there is no files root.
        FileOutsideRootError: a pattern or match leads outside the root (``..``, an absolute path elsewhere, a
            symlink), or is hidden.
        NoFilesMatchedError: a pattern matches no readable file.
        TooManyFilesError: the patterns match more than ``max_files`` files.
        IngestError: the files root is not a folder, or a path cannot be read.
    """
    if files_root is None:
        raise NoFilesRootError()
    root = files_root.expanduser().resolve()
    if not root.is_dir():
        raise IngestError(
            f"The files root {str(files_root)!r} is not a folder. Point --files-root (or AGRAG_FILES_ROOT) at one."
        )
    wanted = tuple(s.lower() for s in suffixes)
    chosen: set[Path] = set()
    skipped: list[FileOutsideRootError] = []
    for pattern in patterns:
        outside: list[FileOutsideRootError] | None = [] if skip_outside else None
        matched = _matches(pattern, root, wanted, outside)
        if not matched:
            if outside:  # every match leads outside: refused, as a plain path would be
                raise outside[0]
            raise NoFilesMatchedError(pattern, root, wanted)
        skipped += [e for e in outside or () if e.path not in {s.path for s in skipped}]
        chosen.update(matched)
        if len(chosen) > max_files:
            raise TooManyFilesError(len(chosen), max_files)
    folder = Path(os.path.commonpath([path.parent for path in chosen]))
    files = tuple(sorted(path.relative_to(folder).as_posix() for path in chosen))
    return FileSelection(folder, files, tuple(f"{e.path}: {e.why}" for e in skipped))


def select_in_folder(
    patterns: Sequence[str], folder: Path, suffixes: Sequence[str], max_files: int = MAX_FILES
) -> tuple[str, ...]:
    """``patterns`` (paths or globs relative to ``folder``) as files of ``folder``, for ``ingest_flow(files=...)``.

    The same checks as ``select_files`` with ``folder`` as the root, so a pattern cannot leave the folder; the files
    stay relative to ``folder`` itself (not their deepest common folder), so they get the ids a whole-folder
    ingestion of ``folder`` gives them, with or without a files root.

    Raises:
        FileOutsideRootError: a pattern leads outside ``folder`` or is hidden.
        NoFilesMatchedError: a pattern matches no readable file.
        TooManyFilesError: the patterns match more than ``max_files`` files.
    """
    base = folder.expanduser().resolve()
    selection = select_files(patterns, base, suffixes, max_files)
    return tuple(sorted((selection.folder / name).relative_to(base).as_posix() for name in selection.files))


def _matches(
    pattern: str, root: Path, suffixes: tuple[str, ...], outside: list[FileOutsideRootError] | None = None
) -> set[Path]:
    """The real paths of the readable files ``pattern`` names below ``root``.

    With ``outside`` (a list), a glob's matches that lead outside the root are added to it instead of raising.
    """
    if not pattern.strip():
        raise FileOutsideRootError(pattern, root, "it is empty (it would mean the whole files root)")
    if ".." in PurePath(pattern).parts:
        raise FileOutsideRootError(pattern, root, "it goes through '..'")
    is_glob = bool(GLOB_CHARACTERS & set(pattern))
    try:
        names = glob.glob(pattern, root_dir=root, recursive=True) if is_glob else [pattern]
        found: set[Path] = set()
        for name in names:
            try:
                path = _checked(name, root, suffixes, strict=not is_glob)
            except FileOutsideRootError as exc:
                if outside is None or not is_glob:
                    raise
                outside.append(exc)
                continue
            if path is not None:
                found.add(path)
    except (OSError, RuntimeError, ValueError) as exc:  # a name too long, a symlink loop, a NUL byte
        raise IngestError(f"Cannot read {pattern!r} under the files root {root}: {exc}.") from exc
    return found


def _checked(name: str, root: Path, suffixes: tuple[str, ...], *, strict: bool) -> Path | None:
    """The real path of ``name`` if it is a readable file inside ``root``; a glob's other matches are skipped."""
    candidate = root / name  # an absolute name stays itself
    if not candidate.exists():
        if strict and candidate.is_symlink():
            raise FileOutsideRootError(name, root, "it is a symlink that leads nowhere")
        return None  # a plain path to nothing: NoFilesMatchedError names it
    real = candidate.resolve()
    if not real.is_relative_to(root):
        raise FileOutsideRootError(name, root, "it leads outside the files root" + _through_link(candidate, root))
    inside = real.relative_to(root).parts
    lexical = candidate.relative_to(root).parts if candidate.is_relative_to(root) else ()
    if any(part.startswith(".") for part in (*lexical, *inside)):
        if strict:
            raise FileOutsideRootError(name, root, "it is hidden (or below a hidden folder)")
        return None
    if not real.is_file() or real.suffix.lower() not in suffixes:
        return None  # a folder or another format: a plain path gets NoFilesMatchedError, which lists the suffixes
    return real


def _through_link(candidate: Path, root: Path) -> str:
    lexical = Path(os.path.normpath(candidate))
    return " (through a symlink)" if lexical.is_relative_to(root) else ""
