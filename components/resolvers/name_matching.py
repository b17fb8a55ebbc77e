"""Name matching for entity resolution: which names to compare, and how alike they are.

Plain functions over normalized names (see ``normalize_name``): blocking candidate pairs by a shared word, acronyms
and the initials they stand for, the words with digits that must match exactly, and the rapidfuzz score.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol, TypeVar

from rapidfuzz import fuzz

from agrag.components.data_models.entity import is_typed

MIN_BLOCK_TOKEN = 3  # shorter words ("of", "ai") would compare unrelated names
MAX_BLOCK = 50  # a word shared by more entities than this ("system") says nothing about sameness
STOPWORDS = frozenset({"a", "an", "and", "for", "in", "of", "on", "the", "to"})


class Named(Protocol):
    """What name matching needs of an entity: its id, names and whether it is stored already."""

    @property
    def id(self) -> str:
        """The entity id."""
        ...

    @property
    def key(self) -> str:
        """The normalized name."""
        ...

    @property
    def name(self) -> str:
        """The name as written."""
        ...

    @property
    def label(self) -> str:
        """The entity's label."""
        ...

    @property
    def known(self) -> bool:
        """True for an entity already stored."""
        ...


N = TypeVar("N", bound=Named)


def name_similarity(a: str, b: str) -> float:
    """Score two normalized names 0-100: the best of rapidfuzz's ``token_sort_ratio`` and ``ratio``.

    Example:
        ```python
        name_similarity("maria chen", "mario chen")  # 90.0
        ```
    """
    return max(fuzz.token_sort_ratio(a, b), fuzz.ratio(a, b))


def spelling_similarity(a: str, b: str) -> float:
    """Score two normalized names 0-100 in word order (rapidfuzz ``ratio``).

    Only this score merges by spelling: the same words in another order ("Samuel Taylor Coleridge" and "Samuel
    Coleridge Taylor") can be two people, so reordered names are near misses that embeddings or the LLM decide.
    """
    return float(fuzz.ratio(a, b))


def number_words(key: str) -> list[str]:
    """The words with digits, sorted: "Line 4" and "Line 5" are two lines however alike they are spelled."""
    return sorted(token for token in key.split() if any(c.isdigit() for c in token))


def labels_compatible(a: str, b: str) -> bool:
    """Equal labels (ignoring case), or at least one untyped (``Name``, ``Topic``...)."""
    return not is_typed(a) or not is_typed(b) or a.casefold() == b.casefold()


def initials(key: str) -> set[str]:
    """The acronyms a normalized name of two or more words may stand for, with and without its stopwords.

    Example:
        ```python
        initials("simultaneous localization and mapping")  # {"slam", "slm"}
        ```
    """
    tokens = key.split()
    if len(tokens) < 2:
        return set()
    variants = {"".join(t[0] for t in tokens), "".join(t[0] for t in tokens if t not in STOPWORDS)}
    return {v for v in variants if len(v) >= 2}


def looks_like_acronym(name: str, key: str, label: str) -> bool:
    """One short word, labelled ``Acronym`` or written with two or more capitals (``SLAM``, ``PhD``)."""
    short = 2 <= len(key) <= 10 and " " not in key
    return short and (label == "Acronym" or sum(c.isupper() for c in name) >= 2)


def blocked_pairs(nodes: Sequence[N]) -> list[tuple[N, N]]:
    """Pairs of differently named entities that share a word (not both stored), in id order.

    Only words of ``MIN_BLOCK_TOKEN`` letters or more block, and a word shared by more than ``MAX_BLOCK`` entities
    is ignored, so the pairs stay few on a large batch.
    """
    blocks: dict[str, list[N]] = defaultdict(list)
    for node in nodes:
        for token in sorted(set(node.key.split())):
            if len(token) >= MIN_BLOCK_TOKEN:
                blocks[token].append(node)
    pairs: dict[tuple[str, str], tuple[N, N]] = {}
    for block in blocks.values():
        if len(block) <= MAX_BLOCK:
            for a, b in itertools.combinations(block, 2):
                if a.key != b.key and not (a.known and b.known):
                    pairs[(a.id, b.id)] = (a, b)
    return [pairs[ids] for ids in sorted(pairs)]


def acronym_expansions(nodes: Sequence[N]) -> list[tuple[N, list[N]]]:
    """Each entity that looks like an acronym, with the other entities whose initials it is, in input order.

    Acronyms that expand to nothing are left out; one with several expansions is ambiguous.
    """
    expansions: dict[str, list[N]] = defaultdict(list)
    for node in nodes:
        for letters in initials(node.key):
            expansions[letters].append(node)
    found = []
    for node in nodes:
        if looks_like_acronym(node.name, node.key, node.label):
            others = [other for other in expansions.get(node.key, []) if other.id != node.id]
            if others:
                found.append((node, others))
    return found
