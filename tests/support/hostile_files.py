"""A folder of hostile files among good ones, as the round-3 probe built it (issue 43, defect 6).

Three files each cut into thousands of chunks by the default chunker: one long line of words, Markdown of nested
headings (every heading with one short line under it), and a repetitive HTML page of many small paragraphs; next to
them ten small Markdown notes that ingest in a second. ``scale`` sizes the hostile files: 1.0 is the probe's folder
(20 MB, 4.9 MB and 10.6 MB); the tests use a small fraction, which passes the same chunk cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ONE_LINE = "one_line.txt"
NESTED_HEADINGS = "nested_headings.md"
REPETITIVE_HTML = "repetitive.html"
HOSTILE = (ONE_LINE, NESTED_HEADINGS, REPETITIVE_HTML)

# Sizes at scale 1.0, in bytes: the probe's files.
_ONE_LINE_BYTES = 20_000_000
_HEADINGS_BYTES = 4_900_000
_HTML_BYTES = 10_600_000


@dataclass(frozen=True, slots=True)
class HostileFolder:
    """The folder, its good notes' names and its hostile files' names."""

    root: Path
    good: tuple[str, ...]
    hostile: tuple[str, ...] = HOSTILE


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def one_line(size: int) -> str:
    """About ``size`` bytes of words on a single line, with no newline at all."""
    return _repeat("Orion telemetry reached Vega station before dawn again ", size).rstrip()


def nested_headings(size: int) -> str:
    """About ``size`` bytes of Markdown headings nested six deep, over and over, each with one line of text."""
    block = "".join(f"{'#' * level} Part {level}\n\nNote at depth {level} about Orion.\n\n" for level in range(1, 7))
    return _repeat(block, size)


def repetitive_html(size: int) -> str:
    """An HTML page of about ``size`` bytes: the same small section with a heading and paragraphs, repeated."""
    unit = (
        "<section><h2>Status</h2><p>Vega reports nominal load on the Orion line.</p>"
        "<div><p>Acme keeps the spare parts at Lyon.</p></div></section>\n"
    )
    head = "<html><head><title>Repetitive</title></head><body>\n"
    return head + _repeat(unit, size - len(head)) + "</body></html>\n"


def good_note(index: int) -> str:
    """A small, ordinary Markdown note naming a person and a system."""
    people = ["Ada Varga", "Bruno Okoro", "Chiara Lindqvist", "Dmitri Moreau", "Elif Tanaka"]
    person = people[index % len(people)]
    return (
        f"# Note {index}\n\n{person} reviewed the Orion planner on day {index}.\n\n"
        f"## Findings\n\nThe Vega perception stack passed {index + 3} checks at the Lyon site.\n"
    )


def make_hostile_folder(root: Path, scale: float = 1.0, good: int = 10) -> HostileFolder:
    """Write the three hostile files (sized by ``scale``) and ``good`` small notes into ``root``; return it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ONE_LINE).write_text(one_line(int(_ONE_LINE_BYTES * scale)), encoding="utf-8")
    (root / NESTED_HEADINGS).write_text(nested_headings(int(_HEADINGS_BYTES * scale)), encoding="utf-8")
    (root / REPETITIVE_HTML).write_text(repetitive_html(int(_HTML_BYTES * scale)), encoding="utf-8")
    names = []
    for index in range(good):
        name = f"note_{index:02d}.md"
        (root / name).write_text(good_note(index), encoding="utf-8")
        names.append(name)
    return HostileFolder(root, tuple(names))
