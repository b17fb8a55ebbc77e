"""``Extraction``: what an extractor found in one chunk."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.relation import Relation


@dataclass(frozen=True, slots=True)
class Mention:
    """An entity named in a chunk, ``count`` times."""

    chunk_id: str
    entity_id: str
    count: int


@dataclass(frozen=True, slots=True)
class Extraction:
    """Entities, mentions and relations found in a batch of chunks, before merging.

    ``about`` links each chunk to the entities it is about (its document's title), a stronger tie than a mention.
    ``unlisted`` names the relation endpoints an extractor met that are no entity of its output, as (id, name),
    so the report of what was pruned can say which names they were.
    """

    entities: tuple[Entity, ...]
    mentions: tuple[Mention, ...]
    relations: tuple[Relation, ...]
    about: tuple[Mention, ...] = ()
    unlisted: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ChunkFailure:
    """A chunk an extractor could not extract from, and why (the LLM failed, or never answered valid JSON)."""

    chunk_id: str
    reason: str


def concat_extractions(parts: Iterable[Extraction]) -> Extraction:
    """One extraction of several, in order (as if one extractor had run over all their chunks)."""
    entities: list[Entity] = []
    mentions: list[Mention] = []
    relations: list[Relation] = []
    about: list[Mention] = []
    unlisted: list[tuple[str, str]] = []
    for part in parts:
        entities += part.entities
        mentions += part.mentions
        relations += part.relations
        about += part.about
        unlisted += part.unlisted
    return Extraction(tuple(entities), tuple(mentions), tuple(relations), tuple(about), tuple(dict.fromkeys(unlisted)))
