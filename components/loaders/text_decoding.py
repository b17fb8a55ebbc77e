"""Decoding the bytes of a text file into a version text: UTF-8, no NUL bytes, LF line endings, not blank."""

from __future__ import annotations

import codecs

from agrag.components.loaders.file_failure import UnreadableFileError

BINARY_SNIFF_BYTES = 8192


def normalize_newlines(text: str) -> str:
    """Return ``text`` with CRLF and lone CR line endings turned into LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_text(raw: bytes, fallback_encoding: str | None = None) -> str:
    """Return the LF-normalized text of ``raw``; a UTF-8 byte order mark is dropped.

    Args:
        raw: The file's bytes.
        fallback_encoding: Tried when ``raw`` is not UTF-8 (an HTML page's declared charset).

    Raises:
        UnreadableFileError: NUL bytes in the first 8 KB ("binary file, not text"), bytes that do not decode
            ("not valid UTF-8 (byte N)", counted from the start of the file) or only white space ("empty file").
    """
    if b"\x00" in raw[:BINARY_SNIFF_BYTES]:
        raise UnreadableFileError("binary file, not text")
    bom = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        text = raw[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"not valid UTF-8 (byte {exc.start + bom})"
        if bom or fallback_encoding is None:
            raise UnreadableFileError(reason) from exc
        text = _decode_as(raw, fallback_encoding, reason)
    text = normalize_newlines(text)
    if not text.strip():
        raise UnreadableFileError("empty file")
    return text


def _decode_as(raw: bytes, encoding: str, utf8_reason: str) -> str:
    try:
        codec = codecs.lookup(encoding).name
    except LookupError:
        raise UnreadableFileError(f"{utf8_reason}, and its declared charset {encoding!r} is unknown") from None
    if codec == "utf-8":
        raise UnreadableFileError(utf8_reason)
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as exc:
        raise UnreadableFileError(f"{utf8_reason}, nor valid {encoding} (byte {exc.start})") from exc
