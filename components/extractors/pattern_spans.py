"""Dates and codes in a sentence: spans the lexical extractor finds by their shape, not their capitals."""

from __future__ import annotations

import re
from collections.abc import Iterator

_FULL_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
    "December",
)  # fmt: skip
_ABBREVIATIONS = ("Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sept", "Sep", "Oct", "Nov", "Dec")
_HOLIDAYS = (
    "Christmas Eve", "Christmas Day", "Christmas", "Boxing Day", "New Year's Eve", "New Year's Day", "Easter Monday",
    "Easter Sunday", "Easter", "Hogmanay", "Halloween",
)  # fmt: skip
# A plain alternation of words is the fastest scan there is (a leading \b or character class would make the regex
# engine try every position); word edges are checked afterwards. Longer words come first.
_ANCHOR = re.compile("|".join((*_FULL_MONTHS, *_ABBREVIATIONS, *_HOLIDAYS)))
_DAY = r"[0-3]?\d(?:st|nd|rd|th)?"
_YEAR = r"(?:1[89]\d\d|2[01]\d\d)"
# What may stand before a month ("Saturday 17", "21-22") and after it (", 2024", " 31, 2024", " 2025").
_BEFORE = re.compile(rf"(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?\s+)?{_DAY}(?:\s*[-–]\s*{_DAY})?\s+$")
_AFTER = re.compile(rf"\.?(?:,?\s+{_YEAR}(?!\d)|\s+{_DAY}(?:\s*[-–]\s*{_DAY})?(?:,\s*{_YEAR})?(?![\d:]))")
_WEEKDAY_BEFORE = re.compile(r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?\s+$")
_NUMERIC_DATE = re.compile(rf"(?<![\w/-])(?:{_YEAR}-[01]\d-[0-3]\d|[0-3]?\d/[01]?\d/{_YEAR})(?![\w/-])")
# A code: letters and digits, with hyphens, slashes or dots between parts (CT-60, GB-3R, NMRC/2022/118, v2, F3).
_CODE = re.compile(
    r"(?<![\w/.-])(?=[A-Za-z0-9./-]*[0-9])(?=[A-Za-z0-9./-]*[A-Za-z])[A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)*(?![\w/-]|\.\w)"
)
# A number is a code when a word says so: "serial 60-0417", "supplier no. 40219", "ref 2291/7".
_CUED_NUMBER = re.compile(
    r"\b(?:[Ss]erial|[Nn]o\.|[Nn]umber|[Rr]ef\.?|[Rr]eference|[Ii]nvoice|#)\s*:?\s*(\d[\d/-]{2,}\d)(?![\w/-])"
)
_LETTER, _DIGIT = re.compile(r"[A-Za-z]"), re.compile(r"[0-9]")
_MEASURE = re.compile(r"^\d+(?:[.,]\d+)?[A-Za-zµ°%]{1,4}$")  # 20m, 96kHz, 512GB, 1st: amounts, not codes
_MAY_VERB = re.compile(r"\s+(?:be|have|not|need|also|well)\b")


def date_spans(sentence: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each date or month in ``sentence`` (``Saturday 17 August 2024``, ``April 2025``, ``May``).

    A day, a day range and a weekday before the month and a year (or ``31, 2024``) after it belong to the date. A
    month alone counts unless it opens the sentence or is ``May`` before a verb-like word; an abbreviation (``Oct``)
    needs a day or a year. Holidays (``Christmas``) and numeric dates (``2024-10-31``, ``31/10/2024``) count; bare
    years, times and weekdays alone do not.
    """
    for match in _ANCHOR.finditer(sentence):
        start, end = match.span()
        if (start and sentence[start - 1].isalnum()) or (end < len(sentence) and sentence[end].isalnum()):
            continue  # inside a word: "Maria", "Decker"
        word = match.group()
        before = _BEFORE.search(sentence, max(0, start - 30), start)
        after = _AFTER.match(sentence, end)
        if word in _HOLIDAYS:
            yield start, end
            continue
        if before is None and after is None:
            if word not in _FULL_MONTHS or not _LETTER.search(sentence, 0, start):
                continue  # an abbreviation alone, or a month opening the sentence
            if word == "May" and _MAY_VERB.match(sentence, end):
                continue
        if before is None and (weekday := _WEEKDAY_BEFORE.search(sentence, max(0, start - 12), start)) and after:
            before = weekday
        yield (before.start() if before else start), (after.end() if after else end)
    if _DIGIT.search(sentence) and ("-" in sentence or "/" in sentence):
        yield from (m.span() for m in _NUMERIC_DATE.finditer(sentence))


def code_spans(sentence: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each code in ``sentence``.

    A code is a word of letters and digits (``CT-60``, ``v2``) that is no amount (``20m``), or a number a word calls
    a serial or a reference (``serial 60-0417``).
    """
    for match in _CODE.finditer(sentence):
        text = match.group()
        if _MEASURE.match(text) or not (_LETTER.search(text) and _DIGIT.search(text)):
            continue  # the lookaheads may have seen the letter or digit past a final dot
        start, end = match.span()
        if text.endswith("s") and len(text) > 2 and text[-2].isdigit():
            end -= 1  # "three CT-6s" are units of the CT-6
        yield start, end
    for match in _CUED_NUMBER.finditer(sentence):
        yield match.span(1)
