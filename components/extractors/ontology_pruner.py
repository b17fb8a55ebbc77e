"""``OntologyPruner``: keeps the entities and relations an ontology declares, and reports what it dropped."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from haystack import component

from agrag.components.data_models.chunk import document_id_of
from agrag.components.data_models.extraction import Extraction
from agrag.components.data_models.ontology import (
    DroppedLabel,
    Ontology,
    PrunedReport,
    UndeclaredPattern,
    relation_type_key,
    relation_type_name,
)
from agrag.components.data_models.relation import Relation, relation_id_for

WILDCARD = "*"
CO_OCCURRENCE = "RELATED_TO"


@dataclass
class _Tally:
    """Distinct ids per group, with the first example of each group."""

    counts: Counter[Any] = field(default_factory=Counter)
    examples: dict[Any, str] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    documents: dict[Any, set[str]] = field(default_factory=dict)

    def add(self, key: Any, item_id: str, example: str, chunk_ids: Iterable[str] = ()) -> None:
        self.documents.setdefault(key, set()).update(document_id_of(c) for c in chunk_ids)
        if item_id in self.seen:
            return
        self.seen.add(item_id)
        self.counts[key] += 1
        self.examples.setdefault(key, example)

    def ranked(self) -> list[tuple[Any, int, str, tuple[str, ...]]]:
        """Groups by count, largest first (ties by key, so reports are stable), each with its documents."""
        rows = sorted(self.counts.items(), key=lambda row: (-row[1], row[0]))
        return [(key, count, self.examples[key], tuple(sorted(self.documents.get(key, ())))) for key, count in rows]


@dataclass
class _RelationTallies:
    """Relations kept, and those dropped or kept as ``RELATED_TO``, by what decided it."""

    kept: list[Relation] = field(default_factory=list)
    patterns: _Tally = field(default_factory=_Tally)
    generalised: _Tally = field(default_factory=_Tally)
    unknown: _Tally = field(default_factory=_Tally)

    def undeclared(self) -> tuple[UndeclaredPattern, ...]:
        dropped = [UndeclaredPattern(t, s, d, n, ex, docs) for (t, s, d), n, ex, docs in self.patterns.ranked()]
        kept = [
            UndeclaredPattern(t, s, d, n, ex, docs, CO_OCCURRENCE)
            for (t, s, d), n, ex, docs in self.generalised.ranked()
        ]
        return (*dropped, *kept)


def _retyped(rel: Relation, rel_type: str, *, undirected: bool = False) -> Relation:
    """``rel`` under another type, its id derived anew (``RELATED_TO`` has no direction: one edge a pair)."""
    source, target = sorted((rel.source_id, rel.target_id)) if undirected else (rel.source_id, rel.target_id)
    return Relation(relation_id_for(source, target, rel_type), source, target, rel_type, rel.chunk_ids, rel.description)


@component
class OntologyPruner:
    """Drops what extraction found that the ontology does not declare, and says what it dropped.

    Entities whose label is not declared are dropped, with their mentions and *about* links, unless the ontology
    declares no labels or the label is an untyped one (``Name``, ``Acronym``, ``Topic``, ``Entity``: the extractor
    could not type the name). A relation's (type, source label, target label) must match a declared pattern (``*``
    matches any label; an untyped endpoint matches only ``*``; no declared relations allow all). Types match whatever
    their case and separators, so the lexical extractor's ``owns`` is a declared ``OWNS`` and ``member of`` is
    ``MEMBER_OF``; a kept relation takes the declared spelling. A relation matching no pattern is kept as an undirected
    ``RELATED_TO`` when the ontology declares that for its labels (the link stays, its predicate does not), else
    dropped; either way the report lists its pattern (``kept_as`` says which). A relation whose source or target is
    not a kept entity (an endpoint the extractor never listed, or one dropped for its label) is dropped. Counts in the
    report are of distinct ids; each row has one example, rows are sorted by count.

    Usage:
        ```python
        out = OntologyPruner(ontology).run(extraction=extraction)
        extraction, report = out["extraction"], out["pruned"]
        ```
    """

    def __init__(self, ontology: Ontology) -> None:
        self.ontology = ontology

    @component.output_types(extraction=Extraction, pruned=PrunedReport)
    def run(self, extraction: Extraction) -> dict[str, Any]:
        """Prune one extraction batch to the ontology."""
        names: dict[str, str] = dict(extraction.unlisted)
        labels: dict[str, str] = {}
        for entity in extraction.entities:
            names.setdefault(entity.id, entity.name)
            labels.setdefault(entity.id, entity.label)
        entities = tuple(e for e in extraction.entities if self._label_allowed(e.label))
        kept = {e.id for e in entities}
        dropped = _Tally()
        mentioned: dict[str, list[str]] = {}
        for mention in (*extraction.mentions, *extraction.about):
            mentioned.setdefault(mention.entity_id, []).append(mention.chunk_id)
        for entity in extraction.entities:
            if entity.id not in kept:
                dropped.add(entity.label, entity.id, entity.name, mentioned.get(entity.id, ()))
        tallies = self._relations(extraction, names, labels, kept)
        pruned = Extraction(
            entities,
            tuple(m for m in extraction.mentions if m.entity_id in kept),
            tuple(tallies.kept),
            tuple(m for m in extraction.about if m.entity_id in kept),
        )
        report = PrunedReport(
            entities_kept=len(kept),
            entities_dropped=len(dropped.seen),
            relations_kept=len({r.id for r in tallies.kept}),
            relations_dropped=len(tallies.patterns.seen) + len(tallies.unknown.seen),
            relations_generalised=len(tallies.generalised.seen),
            dropped_labels=tuple(DroppedLabel(label, n, ex, docs) for label, n, ex, docs in dropped.ranked()),
            undeclared_patterns=tallies.undeclared(),
            unknown_endpoints=len(tallies.unknown.seen),
            unknown_endpoint_example=next(iter(tallies.unknown.examples.values()), ""),
        )
        return {"extraction": pruned, "pruned": report}

    def _relations(
        self, extraction: Extraction, names: dict[str, str], labels: dict[str, str], kept: set[str]
    ) -> _RelationTallies:
        """Each relation kept (under its declared spelling), kept as ``RELATED_TO``, or dropped, and why."""
        tallies = _RelationTallies()
        for rel in extraction.relations:
            example = (
                f"{names.get(rel.source_id, rel.source_id)} -{rel.type}-> {names.get(rel.target_id, rel.target_id)}"
            )
            if rel.source_id not in labels or rel.target_id not in labels:
                tallies.unknown.add(0, rel.id, example)
                continue
            key = (rel.type, labels[rel.source_id], labels[rel.target_id])
            declared = self._declared(*key)
            fallback = None if declared else self._declared(CO_OCCURRENCE, key[1], key[2])
            # reported in the ontology's spelling (``mentors`` is ``MENTORS``), which ``ontology add`` takes
            reported = (relation_type_name(rel.type), key[1], key[2])
            if declared is None and fallback is None:
                tallies.patterns.add(reported, rel.id, example, rel.chunk_ids)
            elif rel.source_id not in kept or rel.target_id not in kept:
                tallies.unknown.add(0, rel.id, example)
            elif declared is None and fallback is not None:
                tallies.generalised.add(reported, rel.id, example, rel.chunk_ids)
                tallies.kept.append(_retyped(rel, fallback, undirected=True))
            else:
                tallies.kept.append(rel if declared == rel.type else _retyped(rel, str(declared)))
        return tallies

    def _untyped(self, label: str) -> bool:
        return not label or label in self.ontology.untyped_labels

    def _label_allowed(self, label: str) -> bool:
        return not self.ontology.entity_labels or self._untyped(label) or label in self.ontology.entity_labels

    def _side_matches(self, declared: str, label: str) -> bool:
        return declared == WILDCARD or (declared == label and not self._untyped(label))

    def _declared(self, rel_type: str, source_label: str, target_label: str) -> str | None:
        """The declared spelling of ``rel_type`` (``owns`` is ``OWNS``) if a pattern allows it here, else None.

        Types match whatever their case and separators (``member of`` is ``MEMBER_OF``); no declared relations
        allow every type as it is.
        """
        if not self.ontology.relations:
            return rel_type
        key = relation_type_key(rel_type)
        return next(
            (
                p.type
                for p in self.ontology.relations
                if relation_type_key(p.type) == key
                and self._side_matches(p.source, source_label)
                and self._side_matches(p.target, target_label)
            ),
            None,
        )
