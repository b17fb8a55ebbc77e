"""Finds the entity names a query mentions: its word n-grams that name an entity of the graph."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from agrag.components.data_models.entity import normalize_name
from agrag.components.extractors.lexical_entity_extractor import STOP_WORDS

MAX_NAME_WORDS = 10  # the longest title name a document gives (lexical extractor's _MAX_TITLE_WORDS)
_WORD = re.compile(r"\w[\w'’.&-]*")


def _words(query: str) -> list[str]:
    words = []
    for match in _WORD.finditer(query):
        word = match.group().rstrip(".").removesuffix("'s").removesuffix("’s")
        if word:
            words.append(word)
    return words


def _name_like(words: list[str]) -> bool:
    """A name starts (after leading function words) with a capital or a digit, or has two content words."""
    content = list(words)
    while content and content[0].casefold() in STOP_WORDS:
        content.pop(0)
    if not content:
        return False
    return content[0][0].isupper() or content[0][0].isdigit() or len(content) > 1


def _meaningful(words: list[str]) -> bool:
    normalized = normalize_name(" ".join(words))
    return len(normalized) > 1 and normalized not in STOP_WORDS and not normalized.isdigit()


def candidate_names(query: str) -> list[str]:
    """Every normalized name ``query_entity_ids`` may look up for ``query``: its word n-grams up to the longest name."""
    words = _words(query)
    found = {
        normalize_name(" ".join(words[start:end]))
        for start in range(len(words))
        for end in range(start + 1, min(len(words), start + MAX_NAME_WORDS) + 1)
    }
    return sorted(found)


def query_entity_ids(query: str, named: Callable[[str], Sequence[str]]) -> list[str]:
    """Entity ids the query names, longest match first at each position; names inside a longer match are dropped.

    Args:
        query: The question or keywords.
        named: The graph's entity ids with a given normalized name (empty when none).
    """
    return [entity_id for group in query_name_groups(query, named) for entity_id in group]


def query_name_groups(query: str, named: Callable[[str], Sequence[str]]) -> list[list[str]]:
    """The entity ids of each name the query gives, one list per name (``query_entity_ids``, not flattened).

    A name several entities answer to ("Midway": a place typed in one article, an untyped name in another, the
    title an article's "Midway" joined) gives them all in one list.
    """
    seen: set[str] = set()
    groups = []
    for group in _outermost(_spans(query, named)):
        fresh = [e for e in group if e not in seen]
        seen.update(fresh)
        if fresh:
            groups.append(fresh)
    return groups


def rarest_names_first(groups: Sequence[Sequence[str]], chunk_count: Callable[[str], int]) -> list[str]:
    """The entity ids of ``groups`` (``query_name_groups``), the name fewest chunks give first, then query order.

    The entities one name gives stay together and count as the name: typed two ways, "Midway" is no rarer.
    """
    order = sorted(range(len(groups)), key=lambda i: (sum(chunk_count(e) for e in groups[i]), i))
    return [e for i in order for e in sorted(groups[i], key=lambda e: (chunk_count(e), groups[i].index(e)))]


def _spans(query: str, named: Callable[[str], Sequence[str]]) -> list[tuple[int, int, Sequence[str]]]:
    """Each word position's longest name: (start word, end word, the entity ids of that name)."""
    words = _words(query)
    spans: list[tuple[int, int, Sequence[str]]] = []
    for start in range(len(words)):
        for end in range(min(len(words), start + MAX_NAME_WORDS), start, -1):
            candidate = words[start:end]
            entity_ids = named(normalize_name(" ".join(candidate)))
            if entity_ids and _meaningful(candidate) and _name_like(candidate):
                spans.append((start, end, entity_ids))
                break
    return spans


def _outermost(spans: list[tuple[int, int, Sequence[str]]]) -> list[Sequence[str]]:
    """The entity ids of each span not inside a longer one, in the query's order."""
    return [
        entity_ids
        for start, end, entity_ids in spans
        if not any(s <= start and end <= e and e - s > end - start for s, e, _ in spans)
    ]
