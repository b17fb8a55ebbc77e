r"""``printable``: text from data made safe for a terminal or a log line, and the hooks that apply it everywhere.

File names, titles, passages, entity names and error messages quoting them come from documents nobody vetted. Printed
raw, an ESC starts a terminal escape sequence (colours, cursor moves, a rewritten title bar, a forged line), a CR
rewrites the line already shown, a bidi override reverses what the reader sees. ``printable`` shows each such
character as a visible escape (``\u001b``, ``\u202e``) instead, so the reader sees what the data holds.

Two hooks route every line through it: ``agrag.service.cli_support.SafeConsole`` (the CLI's rich consoles: every
text segment of every table, message and passage) and ``install_log_escaping`` (every log record's message, whichever
handler formats it).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from typing import Any

from agrag.components.errors import QueryTextError

# C0 controls but tab and newline, DEL, C1 controls, the bidi marks, embeddings, overrides and isolates, and lone
# surrogates (undecodable bytes of a file name or argv: printing one raises UnicodeEncodeError).
_BIDI_AND_SURROGATES = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_AND_SURROGATES}]")
_UNSAFE_ONE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI_AND_SURROGATES}]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    # \uXXXX for all: read the same in a terminal, and a valid JSON escape of the same character in `--json` output
    return f"\\u{ord(match.group()):04x}"


def printable(text: str, *, multiline: bool = True) -> str:
    r"""``text`` with every control character shown as a visible escape (``\u001b``, ``\u202e``).

    Args:
        text: Any text that came from data (a file name, a title, a passage, an error message quoting them).
        multiline: Keep newlines and tabs (a passage); False escapes them too (a table cell, a log field).

    Usage:
        ```python
        printable("report\x1b[2J.md")  # 'report\\u001b[2J.md': the sequence is shown, not run
        ```
    """
    pattern = _UNSAFE if multiline else _UNSAFE_ONE_LINE
    return pattern.sub(_visible, text) if pattern.search(text) else text


def require_text(query: str) -> str:
    """Return ``query`` if it is text; a lone surrogate (bytes that were not UTF-8) raises ``QueryTextError``.

    A shell argument in another encoding reaches Python as surrogate escapes, and JSON may carry a lone surrogate;
    neither can be embedded, tokenized or stored, so the query is refused with a message before it reaches a model.
    """
    found = _SURROGATE.search(query)
    if found is not None:
        raise QueryTextError(query, found.start())
    return query


def _one_line_args(record: logging.LogRecord) -> None:
    """Escape newlines too in the text a record's message is formatted with (file names, paths, titles).

    The message itself keeps its newlines (a traceback, a multi-line message written so on purpose); a value put
    into it is data, and a newline there would forge a log line of its own.
    """
    args = record.args
    if isinstance(args, tuple):
        record.args = tuple(_one_line(a) for a in args)
    elif isinstance(args, Mapping):
        record.args = {k: _one_line(v) for k, v in args.items()}


def _one_line(value: object) -> object:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    return printable(value, multiline=False) if isinstance(value, str) else value


class _EscapedLogRecord(logging.LogRecord):
    """A log record whose message shows control characters escaped; newlines stay only in the message itself."""

    def getMessage(self) -> str:
        _one_line_args(self)
        return printable(super().getMessage())


_installed: list[Any] = []


def install_log_escaping() -> None:
    """Make every log record show control characters escaped, whichever handler formats it (idempotent).

    Set as the record factory: Prefect's handlers, uvicorn's and agrag's all read ``record.getMessage()``.
    """
    if _installed:
        return
    previous = logging.getLogRecordFactory()
    if previous is logging.LogRecord:
        logging.setLogRecordFactory(_EscapedLogRecord)
    else:  # another library's factory: keep it, escape what it builds

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            _one_line_args(record)
            record.msg = printable(record.getMessage())
            record.args = None
            return record

        logging.setLogRecordFactory(factory)
    _installed.append(previous)
