"""Texts handed to agrag under a name: the name's rules, the file each is kept in, and which document it becomes.

A text is kept as one file of the data dir's texts folder (``files_root.TEXTS_FOLDER``), so it is never lost and is
ingested like any other file of a folder: its document id is ``document_id_for(<file name>, <texts folder key>)``,
stable across versions. A name without ``.md`` or ``.txt`` is kept as Markdown (``notes`` and ``notes.md`` are one
text). ``text_target`` refuses a name that would lead to a document read from a file of a folder: a text never
overwrites a file's document.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath

from agrag.components.data_models.document import DOCUMENT_ID_LENGTH, document_id_for
from agrag.components.data_models.stored_document import StoredDocument
from agrag.components.loaders.files_root import TEXTS_FOLDER, folder_key, source_folder
from agrag.components.loaders.markdown_parser import parse_markdown
from agrag.components.loaders.plain_text_parser import parse_plain_text
from agrag.components.stores.graph_store import GraphStore
from agrag.components.text_preview_errors import BadTextError, BadTextNameError, TextOverFileError

MAX_NAME_CHARS = 100
MAX_TEXT_CHARS = 500_000
MAX_TITLE_CHARS = 200
TEXT_SUFFIXES = (".md", ".txt")
NAME_PATTERN = r"^[A-Za-z0-9](?:[A-Za-z0-9 _.\-]{0,98}[A-Za-z0-9_\-])?$"
NAME_RULE = (
    f"1 to {MAX_NAME_CHARS} characters: letters, digits, spaces, '_', '-' and '.', starting with a letter or digit "
    "and ending with a letter, digit, '_' or '-'"
)
_NAME = re.compile(NAME_PATTERN)
_DOCUMENT_ID = re.compile(rf"d[0-9a-f]{{{DOCUMENT_ID_LENGTH - 1}}}")


@dataclass(frozen=True, slots=True)
class TextTarget:
    """Where a named text is kept and which document it is.

    Attributes:
        name: The caller's name for the text, as given.
        folder: The texts folder (resolved; it exists).
        file_name: The file in ``folder`` the text is kept in (the name, with ``.md`` added when it has no suffix).
        document_id: The document id the text is stored under.
    """

    name: str
    folder: Path
    file_name: str
    document_id: str


def text_file_name(name: str) -> str:
    """The file a text named ``name`` is kept in: ``name`` if it ends in .md or .txt, else ``name`` + '.md'.

    Raises:
        BadTextNameError: ``name`` breaks the rule ``NAME_RULE`` (or is ``.``/``..``-like or too long).
    """
    if not isinstance(name, str) or not name:
        raise BadTextNameError(str(name), "it is empty", NAME_RULE)
    if len(name) > MAX_NAME_CHARS:
        raise BadTextNameError(name, f"it is {len(name)} characters long, more than {MAX_NAME_CHARS}", NAME_RULE)
    if not _NAME.fullmatch(name):
        bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c in " _.-"))})
        why = (
            f"it holds {', '.join(repr(c) for c in bad[:5])}"
            if bad
            else "it starts or ends with a character no name may"
        )
        raise BadTextNameError(name, why, NAME_RULE)
    return name if PurePath(name).suffix.lower() in TEXT_SUFFIXES else f"{name}.md"


def titled_text(text: str, file_name: str, title: str | None) -> str:
    """``text`` as it is kept: with ``title`` written as its first heading, unless the text already has that title.

    Without ``title`` the document's title is the text's first level-1 heading (first line, for .txt), else the name.

    Raises:
        BadTextError: the text is empty or only white space, longer than ``MAX_TEXT_CHARS``, or ``title`` is not
            one line of at most ``MAX_TITLE_CHARS`` characters.
    """
    if not text.strip():
        raise BadTextError("it is empty", "Give the text to store.")
    if len(text) > MAX_TEXT_CHARS:
        raise BadTextError(
            f"it is {len(text)} characters long, more than {MAX_TEXT_CHARS}",
            "Split it into several texts, or save it as a file under the files root and ingest the file.",
        )
    if title is None:
        return text
    clean = title.strip()
    if not clean or "\n" in clean or "\r" in clean or len(clean) > MAX_TITLE_CHARS:
        raise BadTextError(
            f"the title {title[:80]!r} is not one line of 1 to {MAX_TITLE_CHARS} characters", "Give a shorter title."
        )
    plain = file_name.lower().endswith(".txt")
    parse = parse_plain_text if plain else parse_markdown
    if parse(text, PurePath(file_name).stem).title == clean:
        return text
    return f"{clean}\n\n{text}" if plain else f"# {clean}\n\n{text}"


def texts_folder(data_dir: Path) -> Path:
    """The data dir's texts folder, created if missing."""
    folder = data_dir.expanduser() / TEXTS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    return folder.resolve()


def text_target(name: str, data_dir: Path, files_root: Path | None, graph: GraphStore) -> TextTarget:
    """Which file and document the text ``name`` is, refusing any that is a document read from a file.

    ``name`` may also be the id of a stored text's document (as ``list_documents`` shows it): that text is meant.

    Raises:
        BadTextNameError: ``name`` breaks the naming rule.
        TextOverFileError: ``name`` is the id of a file's document; or the text's id is taken by a file's document
            (a folder named like the texts folder); or ``name`` is the path of a file at the top of the files root.
    """
    folder = texts_folder(data_dir)
    origin = source_folder(folder, files_root)
    if _DOCUMENT_ID.fullmatch(name):
        named = graph.stored_documents([name]).get(name)
        if named is not None:
            if named.source_folder != origin:
                raise TextOverFileError(name, named.id, _file_of(named))
            return TextTarget(name, folder, named.source_path, named.id)
    file_name = text_file_name(name)
    own = document_id_for(file_name, folder_key(folder, files_root))
    at_root = document_id_for(file_name)  # a file of that name at the top of the files root (or a legacy id)
    stored = graph.stored_documents(sorted({own, at_root}))
    for found in _files_among(stored.values(), origin):
        if found.id == own or found.source_path == file_name:
            raise TextOverFileError(name, found.id, _file_of(found))
    return TextTarget(name, folder, file_name, own)


def keep_text(target: TextTarget, text: str) -> Path:
    """Write ``text`` into the target's file (UTF-8, atomically, so a reader never sees half a text); its path."""
    path = target.folder / target.file_name
    partial = target.folder / f".{target.file_name}.partial"  # hidden: a folder ingestion never reads it
    partial.write_text(text, encoding="utf-8", newline="")
    partial.replace(path)
    return path


def _files_among(documents: Iterable[StoredDocument], texts_origin: str) -> list[StoredDocument]:
    """The documents read from a file of a folder (not from the texts folder; a legacy one of unknown folder too)."""
    return [d for d in documents if d.source_folder != texts_origin]


def _file_of(document: StoredDocument) -> str:
    folder = document.source_folder
    if not folder:
        return f"{document.source_path!r} (of a folder not recorded)"
    return repr(document.source_path if folder == "." else f"{folder.rstrip('/')}/{document.source_path}")
