"""CSV (``.csv``): one table over the whole file, with the exact offsets of every field."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from agrag.components.data_models.document_structure import TableCell, TableRegion
from agrag.components.loaders.file_failure import UnreadableFileError
from agrag.components.loaders.parsed_document import ParsedDocument

DELIMITERS = (",", ";", "\t", "|")
_SNIFF_RECORDS = 20


@dataclass(frozen=True, slots=True)
class _Record:
    """One record: ``text[start:end]`` (without its newline) and the content span of each field."""

    start: int
    end: int
    fields: tuple[tuple[int, int], ...]

    @property
    def blank(self) -> bool:
        return len(self.fields) == 1 and self.fields[0][0] == self.fields[0][1]


def parse_csv(text: str, stem: str) -> ParsedDocument:
    """Read a CSV text as one table whose first record is its header.

    The version text is the file text itself, so every cell points into the real source: an unquoted field's span
    is its text without surrounding blanks, a quoted field's span is the text inside the quotes (a doubled ``""``
    stays doubled there; quoted fields may hold delimiters and newlines). The delimiter is sniffed among comma,
    semicolon, tab and ``|``. Blank lines are no records; ragged records keep the fields they have. The title is
    ``stem``.

    Args:
        text: The decoded, LF-normalized file text; it is the version text.
        stem: The file name without its suffix.

    Raises:
        UnreadableFileError: The text holds no field ("empty file").
    """
    records = [r for r in _scan(text, sniff_delimiter(text)) if not r.blank]
    if not records:
        raise UnreadableFileError("empty file")
    cells = tuple(
        TableCell(row=row, column=column, start=start, end=end)
        for row, record in enumerate(records)
        for column, (start, end) in enumerate(record.fields)
    )
    table = TableRegion(
        start=records[0].start,
        end=records[-1].end,
        cells=cells,
        header_rows=1,
        row_spans=tuple((r.start, r.end) for r in records),
    )
    return ParsedDocument(text=text, title=stem, tables=(table,))


def sniff_delimiter(text: str) -> str:
    """Return the delimiter that splits the first records of ``text`` into the most equal field counts.

    Ties go to the earlier of comma, semicolon, tab and ``|``; a text no candidate splits is taken as comma-separated.
    """

    def score(delimiter: str) -> tuple[int, int]:
        counts = Counter(len(r.fields) for r in _scan(text, delimiter, _SNIFF_RECORDS) if not r.blank)
        width, agreeing = max(counts.items(), key=lambda item: (item[1], item[0]), default=(1, 0))
        return (agreeing, width) if width > 1 else (0, 0)

    scores = {delimiter: score(delimiter) for delimiter in DELIMITERS}
    best = max(DELIMITERS, key=lambda d: scores[d])  # max keeps the first of equal scores
    return best if scores[best] > (0, 0) else DELIMITERS[0]


def _scan(text: str, delimiter: str, limit: int | None = None) -> list[_Record]:
    """Split ``text`` into records (at most ``limit``), tracking every field's offsets."""
    records: list[_Record] = []
    i = 0
    while i < len(text) and (limit is None or len(records) < limit):
        record, i = _scan_record(text, i, delimiter)
        records.append(record)
    return records


def _scan_record(text: str, i: int, delimiter: str) -> tuple[_Record, int]:
    """The record starting at ``i`` and the offset of the next one."""
    start = i
    fields: list[tuple[int, int]] = []
    while True:
        content, raw_end, i = _scan_field(text, i, delimiter)
        fields.append(content)
        if i < len(text) and text[i] == delimiter:
            i += 1
            continue
        return _Record(start=start, end=raw_end, fields=tuple(fields)), i + 1


def _scan_field(text: str, i: int, delimiter: str) -> tuple[tuple[int, int], int, int]:
    """``(content span, end of the field's raw text, offset of the delimiter or newline after it)``."""
    blanks = " \t".replace(delimiter, "")
    n = len(text)
    while i < n and text[i] in blanks:
        i += 1
    if i < n and text[i] == '"':
        close = _closing_quote(text, i + 1)
        if close is None:  # an unterminated quote runs to the end of the text
            end = len(text.rstrip("\n"))
            return (i + 1, max(i + 1, end)), max(i + 1, end), n
        after = close + 1
        while after < n and text[after] not in (delimiter, "\n"):
            after += 1
        raw_end = close + 1 + len(text[close + 1 : after].rstrip())
        return (i + 1, close), raw_end, after
    after = i
    while after < n and text[after] not in (delimiter, "\n"):
        after += 1
    end = i + len(text[i:after].rstrip(blanks))
    return (i, end), end, after


def _closing_quote(text: str, i: int) -> int | None:
    """The offset of the quote that closes a quoted field whose content starts at ``i``; ``""`` is an escape."""
    while (quote := text.find('"', i)) >= 0:
        if text[quote + 1 : quote + 2] != '"':
            return quote
        i = quote + 2
    return None
