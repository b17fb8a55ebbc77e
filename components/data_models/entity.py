"""``Entity``: a named thing the graph knows about."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from agrag.components.data_models.immutable import Immutable

_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+")
_NON_WORD = re.compile(r"[^\w]+")


def normalize_name(name: str) -> str:
    """Return the key under which two spellings of one name merge (case, accents, punctuation, articles)."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").casefold()
    folded = _NON_WORD.sub(" ", folded).strip()
    return _LEADING_ARTICLE.sub("", folded)


# Labels that say "a name, type unknown": the offline extractors' labels. Entities with them are keyed by name only.
UNTYPED_LABELS = frozenset({"Name", "Acronym", "Topic", "Entity", ""})


def is_typed(label: str) -> bool:
    """True for a real type (``Person``), false for a label that only says the type is unknown (``Name``)."""
    return label not in UNTYPED_LABELS


def entity_id_for(name: str, label: str = "") -> str:
    """Return the id of the entity with this name and label.

    Names that normalize alike share an id; a typed label is part of the key, so a ``Person`` and an
    ``Organization`` of the same name are two entities until resolution decides otherwise.
    """
    key = normalize_name(name)
    if is_typed(label):
        key = f"{key}|{label.casefold()}"
    return "e" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:15]


@dataclass(frozen=True, slots=True)
class Entity(Immutable):
    """A named thing: a person, a component, an acronym.

    Attributes:
        id: Derived from the normalized name (see ``entity_id_for``).
        name: The name as first seen.
        label: Type of the entity (``Name``, ``Acronym``, or an ontology label).
        description: What the sources say about it (for the lexical extractor, the first sentence naming it).
    """

    id: str
    name: str
    label: str
    description: str = ""
