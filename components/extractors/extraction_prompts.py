"""The prompts of the LLM entity extractor: one JSON object of entities and relations per chunk.

Every text the extractor sends lives here, so a prompt can be read and changed in one place. Two styles:
``rich`` asks for a description of each entity and the sentence stating each relation; ``light`` asks for names,
labels and triples only, for small models and smaller bills.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from agrag.components.data_models.ontology import Ontology, RelationPattern
from agrag.components.errors import ConfigError
from agrag.components.llm.openai_chat_client import ChatMessage

EMPTY_ANSWER = '{"entities": [], "relations": []}'

_RICH_SHAPE = (
    '{"entities": [{"name": "...", "label": "...", "description": "..."}], '
    '"relations": [{"source": "...", "target": "...", "type": "...", "description": "..."}]}'
)
_LIGHT_SHAPE = (
    '{"entities": [{"name": "...", "label": "..."}], "relations": [{"source": "...", "target": "...", "type": "..."}]}'
)

_INTRO = (
    "You build a knowledge graph from documents. From the passage the user gives, extract the named entities "
    "(people, organisations, teams, components, products, places, events, concepts...) and the relations the "
    "passage states between them."
)

_GLEANING = (
    "Some entities or relations were missed. Answer with only the missing ones in the same JSON format, "
    f"or {EMPTY_ANSWER} if none."
)

_REPAIR = "Your answer was not valid JSON; answer only the JSON object."


class PromptStyle(StrEnum):
    """How much the extraction prompt asks for: ``rich`` (with descriptions) or ``light`` (names and triples)."""

    RICH = "rich"
    LIGHT = "light"

    @classmethod
    def from_str(cls, value: str) -> PromptStyle:
        """Return the style named ``value``.

        Raises:
            ConfigError: ``value`` names no style; the message lists the valid ones.
        """
        try:
            return cls(value)
        except ValueError:
            valid = ", ".join(style.value for style in cls)
            raise ConfigError(f"Unknown extraction prompt {value!r}. Valid prompts: {valid}.") from None


def _described(pairs: Sequence[tuple[str, str]]) -> str:
    """One indented line per name that has a description: ``  Vendor: A company that sells us parts``."""
    return "".join(f"\n  {name}: {text}" for name, text in pairs if text)


def _label_rule(ontology: Ontology) -> str:
    if ontology.entity_labels:
        declared = set(ontology.entity_labels)
        return (
            f"- label: one of {', '.join(ontology.entity_labels)}. Use only these labels; leave out entities that "
            "fit none of them."
            + _described([(label, text) for label, text in ontology.label_descriptions if label in declared])
        )
    suggested = [label for label, _ in ontology.label_descriptions]
    if suggested:
        return (
            "- label: a short CamelCase type, such as Person, Organization, Component, Location. Prefer these "
            f"labels when they fit: {', '.join(suggested)}." + _described(ontology.label_descriptions)
        )
    return "- label: a short CamelCase type, such as Person, Organization, Component, Location."


def _pattern_text(patterns: Sequence[RelationPattern]) -> str:
    def side(label: str) -> str:
        return "any" if label == "*" else label

    return ", ".join(f"{side(p.source)} -> {side(p.target)}" for p in patterns)


def _type_rule(ontology: Ontology) -> str:
    if not ontology.relations:
        return "- type: a short UPPER_SNAKE_CASE verb phrase, such as WORKS_FOR, PART_OF, LOCATED_IN." + _described(
            ontology.relation_descriptions
        )
    by_type: dict[str, list[RelationPattern]] = {}
    for pattern in ontology.relations:
        by_type.setdefault(pattern.type, []).append(pattern)
    meaning = {rel_type: text for rel_type, text in ontology.relation_descriptions if text}
    lines = [
        f"  {rel_type} ({_pattern_text(patterns)})" + (f": {meaning[rel_type]}" if rel_type in meaning else "")
        for rel_type, patterns in by_type.items()
    ]
    return (
        "- type: one of these relation types, only from and to entities of the labels shown (source -> target). "
        "Use only these types; leave out relations that fit none of them.\n" + "\n".join(lines)
    )


def system_prompt(ontology: Ontology, style: PromptStyle | str = PromptStyle.RICH) -> str:
    """Return the system prompt: the JSON shape to answer with, and the labels and relation types to use.

    Args:
        ontology: Declared labels and relation patterns are listed and required; an open ontology asks for short
            CamelCase labels and UPPER_SNAKE relation types.
        style: ``rich`` asks for descriptions, ``light`` does not.
    """
    rich = PromptStyle.from_str(style) is PromptStyle.RICH
    rules = [
        "- name: the name exactly as written in the passage (no added or expanded words).",
        _label_rule(ontology),
    ]
    if rich:
        rules.append("- entity description: one sentence on what the passage says about the entity.")
    rules.append('- source and target: names of entities in your "entities" list; the relation goes source -> target.')
    rules.append(_type_rule(ontology))
    if rich:
        rules.append("- relation description: the sentence of the passage that states the relation.")
    return "\n".join(
        [
            _INTRO,
            "",
            "Answer with ONE JSON object and nothing else:",
            _RICH_SHAPE if rich else _LIGHT_SHAPE,
            "",
            "Rules:",
            *rules,
            "- Extract only what the passage states; add nothing from your own knowledge.",
            f"- If the passage names nothing, answer {EMPTY_ANSWER}.",
        ]
    )


def extraction_messages(
    chunk_text: str, title: str, heading: str, ontology: Ontology, style: PromptStyle | str = PromptStyle.RICH
) -> list[ChatMessage]:
    """Return the chat asking for the entities and relations of one passage.

    Args:
        chunk_text: The passage.
        title: Title of its document (context only; the passage is what to extract from).
        heading: Heading path of the passage, joined with `` > ``.
        ontology: Labels and relation patterns to ask for (see ``system_prompt``).
        style: ``rich`` or ``light``.

    Usage:
        ```python
        messages = extraction_messages(chunk.text, chunk.title, chunk.heading, Ontology(), "light")
        ```
    """
    lines = [f"Document: {title}"] if title else []
    if heading and heading != title:
        lines.append(f"Section: {heading}")
    if lines:
        lines.append("")
    lines.extend(["Passage:", '"""', chunk_text, '"""'])
    return [ChatMessage("system", system_prompt(ontology, style)), ChatMessage("user", "\n".join(lines))]


def gleaning_messages(messages: Sequence[ChatMessage], answer: str) -> list[ChatMessage]:
    """Return the chat continued with the previous answer and a request for what it missed.

    Args:
        messages: The chat so far (the extraction messages, and any earlier gleaning rounds).
        answer: The assistant's answer to ``messages``.
    """
    return [*messages, ChatMessage("assistant", answer), ChatMessage("user", _GLEANING)]


def repair_messages(messages: Sequence[ChatMessage], answer: str) -> list[ChatMessage]:
    """Return the chat continued with an answer that was not valid JSON and a request for only the JSON object.

    Args:
        messages: The chat the answer replied to.
        answer: The assistant's answer that did not parse.
    """
    return [*messages, ChatMessage("assistant", answer), ChatMessage("user", _REPAIR)]
