"""``ExactNameResolver``: merges extracted entities whose names normalize alike."""

from __future__ import annotations

from collections import Counter, defaultdict

from haystack import component

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.relation import Relation


@component
class ExactNameResolver:
    """Merges entities by normalized name (case, accents, punctuation and a leading article do not matter).

    The merged entity takes the most frequent spelling and label and the first description; mentions of one chunk
    add up, and a relation found in several chunks keeps all of them as support.

    Usage:
        ```python
        merged = ExactNameResolver().run(extraction=extraction)["extraction"]
        ```
    """

    @component.output_types(extraction=Extraction)
    def run(self, extraction: Extraction) -> dict[str, Extraction]:
        """Merge one extraction batch."""
        names: dict[str, Counter[str]] = defaultdict(Counter)
        labels: dict[str, Counter[str]] = defaultdict(Counter)
        descriptions: dict[str, str] = {}
        for entity in extraction.entities:
            names[entity.id][entity.name] += 1
            labels[entity.id][entity.label] += 1
            descriptions.setdefault(entity.id, entity.description)
        entities = tuple(
            Entity(eid, names[eid].most_common(1)[0][0], labels[eid].most_common(1)[0][0], descriptions[eid])
            for eid in names
        )
        mention_counts: Counter[tuple[str, str]] = Counter()
        for mention in extraction.mentions:
            mention_counts[(mention.chunk_id, mention.entity_id)] += mention.count
        mentions = tuple(Mention(c, e, n) for (c, e), n in mention_counts.items())
        first: dict[str, Relation] = {}
        support: dict[str, set[str]] = defaultdict(set)
        for rel in extraction.relations:
            first.setdefault(rel.id, rel)
            support[rel.id].update(rel.chunk_ids)
        relations = tuple(
            Relation(r.id, r.source_id, r.target_id, r.type, tuple(sorted(support[r.id])), r.description)
            for r in first.values()
        )
        about = tuple(dict.fromkeys(Mention(m.chunk_id, m.entity_id, 1) for m in extraction.about))
        return {"extraction": Extraction(entities, mentions, relations, about)}
