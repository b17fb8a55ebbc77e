"""The synthetic corpus of ``scale_bench.py``: Markdown notes whose names follow a Zipf law, and queries about them.

Real collections name a few things very often and most things rarely, and keep meeting new names as they grow
(Heaps' law). Here every name is drawn by rank from an open-ended list (people, components, sites, acronyms) with
probability proportional to ``1 / rank**ZIPF_EXPONENT``, so the distinct entities grow sublinearly with the corpus
and the mention counts have the heavy head that hub entities give a graph. Names are made from syllables, so rank
``k`` always spells the same name: corpora of several sizes share their head. Each chunk is one section of 300-500
characters; sentences name two to four things each, so the lexical extractor finds mentions and co-occurrence
relations in them the way it does in real notes.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from bench_ingest_search import PARTS, VERBS, WORDS  # type: ignore[import-not-found]  # make bench's vocabulary

SECTIONS_PER_FILE = 20
ZIPF_EXPONENT = 1.05
SYLLABLES = (
    "ka lo ve ri san tor mi del ara bex cal dor en fa gil hu ion jor kes lum mar nel oth pra quin ros sel tam "
    "ul vor wen xan yar zel bri cor dra eth fin gor hal ith kal lor mon"
).split()  # 48
# Name spaces per kind (ranks beyond them are never drawn): wide enough that a million chunks keep finding new names.
PEOPLE, COMPONENTS, SITES, ACRONYMS = 48**4, 48**2 * len(PARTS), 48**3, 26**3
_SCRAMBLE = 2_654_435_761  # odd: multiplying by it modulo a power of 48 permutes the ranks (neighbours look unalike)


def _word(code: int, syllables: int) -> str:
    parts = []
    for _ in range(syllables):
        code, digit = divmod(code, len(SYLLABLES))
        parts.append(SYLLABLES[digit])
    return "".join(parts).capitalize()


def person(rank: int) -> str:
    """The person of ``rank``: two invented words, e.g. 'Kalor Vesan'."""
    code = (rank * _SCRAMBLE) % PEOPLE
    return f"{_word(code, 2)} {_word(code // 48**2, 2)}"


def component(rank: int) -> str:
    """The component of ``rank``: an invented brand and a part, e.g. 'Delmi Planner'."""
    brand, part = divmod((rank * _SCRAMBLE) % COMPONENTS, len(PARTS))
    return f"{_word(brand, 2)} {PARTS[part]}"


def site(rank: int) -> str:
    """The site of ``rank``: one invented three-syllable word."""
    return _word((rank * _SCRAMBLE) % SITES, 3)


def acronym(rank: int) -> str:
    """The acronym of ``rank``: three capitals."""
    code = (rank * _SCRAMBLE) % ACRONYMS
    return "".join(chr(65 + (code // 26**i) % 26) for i in range(3))


class ZipfRanks:
    """Ranks drawn with probability proportional to ``1 / rank**ZIPF_EXPONENT`` over ``1..size`` (vectorized)."""

    def __init__(self, size: int, seed: int) -> None:
        weights = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** ZIPF_EXPONENT
        self._cumulative = np.cumsum(weights / weights.sum())
        self._rng = np.random.default_rng(seed)
        self._buffer: list[int] = []

    def next(self) -> int:
        """One rank (from a refilled buffer of draws)."""
        if not self._buffer:
            draws = np.searchsorted(self._cumulative, self._rng.random(65_536), side="right") + 1
            self._buffer = draws.tolist()
        return self._buffer.pop()


@dataclass
class Names:
    """A Zipf stream of ranks per kind of name."""

    people: ZipfRanks
    components: ZipfRanks
    sites: ZipfRanks
    acronyms: ZipfRanks

    @classmethod
    def seeded(cls, seed: int) -> Names:
        return cls(
            ZipfRanks(min(PEOPLE, 2_000_000), seed),
            ZipfRanks(COMPONENTS, seed + 1),
            ZipfRanks(min(SITES, 50_000), seed + 2),
            ZipfRanks(ACRONYMS, seed + 3),
        )

    def person(self) -> str:
        return person(self.people.next())

    def component(self) -> str:
        return component(self.components.next())

    def site(self) -> str:
        return site(self.sites.next())

    def acronym(self) -> str:
        return acronym(self.acronyms.next())


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n))


def sentence(rng: random.Random, names: Names) -> str:
    """One sentence naming two to four things."""
    kind = rng.randrange(4)
    if kind == 0:
        return f"{names.person()} {rng.choice(VERBS)} the {names.component()} for {_words(rng, 3)} in {names.site()}."
    if kind == 1:
        return f"The {names.component()} uses {names.acronym()} to {_words(rng, 5)} and {_words(rng, 3)}."
    if kind == 2:
        asker, asked = names.person(), names.person()
        return f"After the {_words(rng, 2)} at {names.site()}, {asker} asked {asked} for {_words(rng, 4)}."
    return f"{names.acronym()} {_words(rng, 4)} with {_words(rng, 4)} while the {names.component()} {_words(rng, 2)}."


def section(rng: random.Random, names: Names) -> str:
    """One chunk's text: 300 to 500 characters of sentences."""
    target, parts, size = rng.randint(300, 500), [], 0
    while size < target:
        parts.append(sentence(rng, names))
        size += len(parts[-1]) + 1
    return " ".join(parts)


def files(chunks: int, seed: int) -> Iterator[tuple[str, str]]:
    """(file name, Markdown text) of a corpus of ``chunks`` sections, SECTIONS_PER_FILE per file."""
    rng, names = random.Random(seed), Names.seeded(seed)
    for f in range(-(-chunks // SECTIONS_PER_FILE)):
        count = min(SECTIONS_PER_FILE, chunks - f * SECTIONS_PER_FILE)
        lines = [f"# {names.component()} notes {f}\n"]
        for s in range(count):
            lines.append(f"## {names.site()} {_words(rng, 2)} {s}\n\n{section(rng, names)}\n")
        yield f"notes_{f // 1000:03d}/notes_{f:07d}.md", "\n".join(lines)


def write_corpus(folder: Path, chunks: int, seed: int = 7) -> int:
    """Write the corpus of ``chunks`` sections under ``folder`` (1,000 files per subfolder); return the file count."""
    count = 0
    for name, text in files(chunks, seed):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        count += 1
    return count


def queries(n: int, seed: int) -> list[str]:
    """``n`` questions about the corpus's names, drawn with the same Zipf law (popular names are asked about more)."""
    rng, names = random.Random(seed), Names.seeded(seed + 100)
    templates = [
        lambda: f"Who owns the {names.component()}?",
        lambda: f"What does {names.acronym()} do in {_words(rng, 2)}?",
        lambda: f"Which {names.component()} changes did {names.person()} make in {names.site()}?",
        lambda: f"{names.acronym()} {_words(rng, 3)}",
        lambda: f"Why did the {_words(rng, 2)} fail at {names.site()}?",
        lambda: f"Who did {names.person()} work with on the {names.component()}?",
    ]
    return [rng.choice(templates)() for _ in range(n)]
