"""A synthetic corpus of many small Markdown notes, and a scripted LLM that extracts from them.

Every note names a few people, systems and sites drawn from fixed pools, so the graph it yields is known in
advance: who works with whom, who owns which system, where a system runs. The script answers an extraction prompt
with the pool names its passage contains, a gleaning round with nothing new, and a community report with the first
names its prompt lists.
"""

from __future__ import annotations

import json
import random
import re
from itertools import pairwise
from pathlib import Path

PEOPLE = [
    f"{first} {last}"
    for first, last in zip(
        [
            "Ada",
            "Bruno",
            "Chiara",
            "Dmitri",
            "Elif",
            "Farid",
            "Greta",
            "Hiro",
            "Ines",
            "Jonas",
            "Kamala",
            "Luis",
            "Mirela",
            "Nils",
            "Olu",
            "Petra",
            "Quentin",
            "Rosa",
            "Sven",
            "Tanvi",
        ],
        [
            "Varga",
            "Okoro",
            "Lindqvist",
            "Moreau",
            "Tanaka",
            "Haddad",
            "Novak",
            "Silva",
            "Berg",
            "Costa",
            "Iyer",
            "Keller",
            "Duarte",
            "Fischer",
            "Adeyemi",
            "Horvat",
            "Marchetti",
            "Nakamura",
            "Olsen",
            "Rahman",
        ],
        strict=True,
    )
]
SYSTEMS = [
    f"{name} Service"
    for name in (
        "Aurora",
        "Basalt",
        "Cobalt",
        "Dune",
        "Ember",
        "Fjord",
        "Garnet",
        "Harbor",
        "Iris",
        "Juniper",
        "Kestrel",
        "Lumen",
        "Meridian",
        "Nimbus",
        "Onyx",
        "Pylon",
    )
]
SITES = ["Porto", "Tallinn", "Ghent", "Kraków", "Lyon", "Bergen", "Turin", "Utrecht"]
VISITOR = "Zora Quill"  # named by no generated note: a test adds her to one, then takes her out again
LABELS = {
    **dict.fromkeys([*PEOPLE, VISITOR], "Person"),
    **dict.fromkeys(SYSTEMS, "Component"),
    **dict.fromkeys(SITES, "Location"),
}
_PASSAGE = re.compile(r'Passage:\s*"""\n?(.*?)\n?"""', re.DOTALL)


def note_text(index: int, rng: random.Random) -> str:
    """One note: a title, a section on people and systems, a section on where the system runs."""
    a, b = rng.sample(PEOPLE, 2)
    system = rng.choice(SYSTEMS)
    site = rng.choice(SITES)
    return (
        f"# Note {index:03d}\n\n"
        f"## Team\n\n{a} works with {b} on the {system}. {a} owns the {system} since release {index}.\n\n"
        f"## Deployment\n\nThe {system} runs in {site}. Incident {index} was closed by {b}.\n"
    )


def write_corpus(folder: Path, count: int = 200, seed: int = 7) -> list[Path]:
    """Write ``count`` notes into ``folder``; the same seed writes the same notes."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        path = folder / f"note_{index:03d}.md"
        path.write_text(note_text(index, rng), encoding="utf-8")
        paths.append(path)
    return paths


def _extraction(passage: str) -> str:
    found = [name for name in LABELS if name in passage]
    people = [n for n in found if LABELS[n] == "Person"]
    systems = [n for n in found if LABELS[n] == "Component"]
    sites = [n for n in found if LABELS[n] == "Location"]
    relations = [{"source": a, "target": b, "type": "WORKS_WITH"} for a, b in pairwise(people)]
    relations += [{"source": p, "target": s, "type": "OWNS"} for p in people[:1] for s in systems]
    relations += [{"source": s, "target": t, "type": "RUNS_IN"} for s in systems for t in sites]
    entities = [{"name": n, "label": LABELS[n], "description": f"{n} is named in this note."} for n in found]
    return json.dumps({"entities": entities, "relations": relations})


def answer(messages: list[dict[str, str]]) -> str:
    """The script: an extraction, a gleaning round (nothing new) or a community report."""
    system = messages[0]["content"] if messages else ""
    if "knowledge graph from documents" in system:
        if "were missed" in messages[-1]["content"]:
            return '{"entities": [], "relations": []}'
        match = _PASSAGE.search(messages[1]["content"])
        return _extraction(match.group(1) if match else messages[1]["content"])
    prompt = "\n".join(m["content"] for m in messages)
    names = sorted((n for n in LABELS if n in prompt), key=prompt.index)[:3]
    return json.dumps(
        {
            "title": " and ".join(names) or "A community",
            "summary": f"How {', '.join(names)} relate.",
            "rating": 5.0,
            "findings": [{"summary": f"{n} is central", "explanation": f"{n} appears in the notes."} for n in names],
        }
    )
