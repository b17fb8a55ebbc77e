"""Finds the names a question mentions, by rules: whether or not the graph knows them (``query_names`` resolves)."""

from __future__ import annotations

import re

from agrag.components.retrievers.query_words import Word, words_of

_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|‘([^’]+)’|(?<!\w)'([^']+)'(?!\w)")
TITLES = frozenset({"dr", "mr", "mrs", "ms", "mx", "prof", "professor", "sir", "dame", "st", "capt", "rev", "fr"})
# Inside a name between capitalised words: ``Bank of England``, ``Ludwig van Beethoven``.
CONNECTORS = frozenset({"of", "de", "del", "der", "van", "von", "la", "le", "du", "da", "di", "y"})
# Capitalised abbreviations that name a kind of thing, not a thing: they are no hint on their own.
COMMON_ABBREVIATIONS = frozenset(
    "phd msc bsc ba ma mba md vat ceo cfo cto coo pi tv dna rna edna gps usb am pm ad bc ok faq id".split()
)


def _quoted(query: str) -> list[tuple[int, int, str]]:
    spans = []
    for match in _QUOTED.finditer(query):
        index = next(i for i in range(1, 5) if match.group(i) is not None)
        text = match.group(index).strip()
        if text:
            spans.append((match.start(), match.end(), text))
    return spans


def _name_word(word: Word) -> bool:
    return word.capitalised and not word.function_word


def _joined(query: str, left: Word, right: Word) -> bool:
    """Whether ``right`` continues the name that ``left`` ends: ``Dr. X``, ``Jon L. Luther``, ``Macleod & Rae``."""
    gap = query[left.end : right.start]
    if left.possessive:
        return False
    if gap == " ":
        return True
    initial = len(left.text) == 1 and left.capitalised
    return (gap == ". " and (left.lower in TITLES or initial)) or gap == " & "


def _continues(run: list[Word], word: Word, following: Word | None, query: str) -> bool:
    """Whether ``word`` continues ``run``.

    It does as a name word, a capitalised function word inside a title (``Battle of Mine Creek``), a number
    (``Big Hero 6``, not a year), or a connector between name words (``Bank of the West``).
    """
    if _name_word(word) or (word.capitalised and word.function_word):
        return True
    if word.text.isdigit():
        return not (len(word.text) == 4 and 1000 <= int(word.text) <= 2100)
    before_name = following is not None and following.capitalised and _joined(query, word, following)
    inner = (
        word.lower in CONNECTORS
        or (word.lower == "and" and any(w.lower == "of" for w in run))
        or (word.lower == "the" and run[-1].lower == "of")
    )
    if word.lower == "of" and following is not None and following.lower == "the":
        return True  # "Curse of the Jade Scorpion": "the" is checked next
    return inner and before_name


def _runs(query: str, words: list[Word]) -> list[list[Word]]:
    """Runs of name words, joined by spaces, titles, ``&`` and connectors (``and`` only after ``of``)."""
    runs: list[list[Word]] = []
    run: list[Word] = []
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else None
        if run and _joined(query, run[-1], word) and _continues(run, word, following, query):
            run.append(word)
            continue
        if run:
            runs.append(run)
        run = [word] if _name_word(word) else []
    if run:
        runs.append(run)
    return runs


def _keep(run: list[Word], words: list[Word]) -> bool:
    if len(run) == 1:
        word = run[0]
        if word.lower in COMMON_ABBREVIATIONS or word.lower in TITLES or len(word.bare) == 1:
            return False
        if word is words[0] and word.bare[1:].islower():
            return False  # "Roughly how many", "Name the": a lone title-case word opening a question is rarely a name
    return True


def hint_spans(query: str) -> list[tuple[int, int, str]]:
    """Each name of ``query`` with where it is written: ``(start, end, text)``, in order, each name once."""
    quoted = _quoted(query)
    found = list(quoted)
    words = [w for w in words_of(query) if not any(s <= w.start < e for s, e, _ in quoted)]
    for run in _runs(query, words):
        while run and (run[-1].lower in CONNECTORS or run[-1].lower in ("and", "the")):
            run.pop()
        while run and (run[0].lower in COMMON_ABBREVIATIONS or run[0].lower in CONNECTORS):
            run.pop(0)  # "the PI of DEEPSONG" names DEEPSONG
        if run and _keep(run, words):
            found.append((run[0].start, run[-1].end, query[run[0].start : run[-1].start] + run[-1].bare))
    spans: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for start, end, text in sorted(found):
        if text.casefold() not in seen:
            seen.add(text.casefold())
            spans.append((start, end, text))
    return spans


def entity_hints(query: str) -> tuple[str, ...]:
    """The names ``query`` mentions, as written, in order of appearance, each once.

    Quoted strings are names whole; otherwise a name is a run of capitalised words (``Lukas Brenner``,
    ``Hexley University``, ``Bank of England``, ``Macleod & Rae``), a code (``CT-60``, ``SH-24-07``) or a titled name
    (``Dr. Cathcart``). Possessives are dropped (``DEEPSONG's`` -> ``DEEPSONG``); function words, months and days
    that start a sentence are not names; a lone ordinary word opening the question (``Roughly``) is not either.

    Usage:
        ```python
        entity_hints("Who now skippers the vessel that Declan Rourke quoted for CT-60?")  # ('Declan Rourke', 'CT-60')
        ```
    """
    return tuple(text for _, _, text in hint_spans(query))
