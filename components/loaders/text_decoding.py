"""Decoding the bytes of a text file into a version text: UTF-8 (or UTF-16/32 with a BOM), LF line endings."""

from __future__ import annotations

import codecs

from agrag.components.loaders.file_failure import UnreadableFileError

BINARY_SNIFF_BYTES = 8192
# UTF-32 first: its little-endian BOM starts with UTF-16's.
_UNICODE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)


def normalize_newlines(text: str) -> str:
    """Return ``text`` with CRLF and lone CR line endings turned into LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_text(raw: bytes, fallback_encoding: str | None = None) -> str:
    """Return the LF-normalized text of ``raw``; a byte order mark is dropped.

    Text is UTF-8, or UTF-16 or UTF-32 when it starts with their byte order mark (as Windows tools write it); the
    BOM is what tells those apart from binary files, whose NUL bytes they share.

    Args:
        raw: The file's bytes.
        fallback_encoding: Tried when ``raw`` is not UTF-8 (an HTML page's declared charset).

    Raises:
        UnreadableFileError: NUL bytes in the first 8 KB of a file without a UTF-16/32 BOM ("binary file, not
            text"), bytes that do not decode ("not valid UTF-8 (byte N)", counted from the start of the file) or
            only white space ("empty file").
    """
    for mark, codec, name in _UNICODE_BOMS:
        if raw.startswith(mark):
            return _unicode_with_bom(raw, len(mark), codec, name)
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


def _unicode_with_bom(raw: bytes, bom: int, codec: str, name: str) -> str:
    try:
        text = raw[bom:].decode(codec)
    except UnicodeDecodeError as exc:
        raise UnreadableFileError(f"not valid {name} after its byte order mark (byte {exc.start + bom})") from exc
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
