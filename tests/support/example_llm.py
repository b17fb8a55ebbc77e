"""A scripted LLM for the example corpus: answers extraction, report and yes/no prompts from fixed tables.

Extraction answers name the fixture entities a passage contains, with the sentence naming them as description, and
the fixture relations whose two ends it names. It also answers what a real model gets wrong, so the ontology has
something to prune: a ``Date`` label, a ``MENTORS`` relation type and a relation to an entity it never listed.
"""

from __future__ import annotations

import json
import re

ENTITIES = {
    "Maria Chen": "Person",
    "Tomas Eriksen": "Person",
    "Daniel Okafor": "Person",
    "Priya Nair": "Person",
    "Lena Brandt": "Person",
    "Orion Planner": "Component",
    "Vega Perception": "Component",
    "Atlas Controller": "Component",
    "Beacon Telemetry": "Component",
    "Lyon": "Location",
    "Rotterdam": "Location",
    "SLAM": "Technology",
    "Simultaneous Localization and Mapping": "Technology",  # resolution merges it with SLAM (acronym)
    "Robot Operating System": "Technology",
    "ROS": "Technology",
    "2024": "Date",  # not in the engineering ontology: pruned
}
RELATIONS = [
    ("Maria Chen", "WROTE", "Orion Planner"),
    ("Tomas Eriksen", "OWNS", "Vega Perception"),
    ("Daniel Okafor", "OWNS", "Atlas Controller"),
    ("Priya Nair", "OWNS", "Beacon Telemetry"),
    ("Tomas Eriksen", "WORKS_WITH", "Maria Chen"),
    ("Orion Planner", "DEPENDS_ON", "Vega Perception"),
    ("Vega Perception", "USES", "SLAM"),
    ("Lena Brandt", "MENTORS", "Maria Chen"),  # an undeclared relation type: pruned
    ("Priya Nair", "RESOLVED", "Replanning Storm"),  # "Replanning Storm" is never listed as an entity: pruned
]
_PASSAGE = re.compile(r'Passage:\s*"""\n?(.*?)\n?"""', re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _sentence_naming(text: str, name: str) -> str:
    flat = " ".join(text.split())
    return next((s for s in _SENTENCE.split(flat) if name in s), flat[:200])


def extraction_answer(passage: str) -> str:
    """The entities of ``ENTITIES`` the passage names and the relations of ``RELATIONS`` between them."""
    found = {name: label for name, label in ENTITIES.items() if re.search(rf"\b{re.escape(name)}\b", passage)}
    entities = [{"name": n, "label": lbl, "description": _sentence_naming(passage, n)} for n, lbl in found.items()]
    relations = [
        {"source": s, "target": t, "type": rel, "description": _sentence_naming(passage, s)}
        for s, rel, t in RELATIONS
        if s in found and (t in found or (t == "Replanning Storm" and "incident commander" in passage))
    ]
    return json.dumps({"entities": entities, "relations": relations})


def report_answer(prompt: str) -> str:
    """A community report naming the first fixture entities the prompt lists."""
    names = sorted((n for n in ENTITIES if n in prompt), key=prompt.index)[:3]
    title = " and ".join(names) or "A community"
    return json.dumps(
        {
            "title": f"{title} (LLM)",
            "summary": f"How {', '.join(names)} relate." if names else "A small community.",
            "rating": 6.5,
            "findings": [{"summary": f"{n} is central", "explanation": f"{n} appears in the sources."} for n in names],
        }
    )


def answer(messages: list[dict[str, str]]) -> str:
    """The script: an extraction, a gleaning round, a report, or a yes/no resolution question."""
    system = messages[0]["content"] if messages else ""
    last = messages[-1]["content"]
    if "knowledge graph from documents" in system:
        if "were missed" in last:
            return '{"entities": [], "relations": []}'
        match = _PASSAGE.search(messages[1]["content"])
        return extraction_answer(match.group(1) if match else messages[1]["content"])
    if '"same"' in system or '"same"' in last:
        return '{"same": false, "reason": "different things"}'
    return report_answer("\n".join(m["content"] for m in messages))
