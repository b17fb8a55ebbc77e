"""The fact points an ingestion or a re-extraction writes: one per relation its extraction found.

A fact's vector is made from its passage's and its ends' (``fact_vectors``): no model runs for facts. Every relation
the run writes gets its point written again (pending, see ``PendingVectors``), even when the facts collection holds
one already: the commit that writes the relation settles the point from the graph, and a point that an earlier commit
of the same run deleted (its relation lost its last passage there) is written back.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import replace

from agrag.components.data_models.extraction import Extraction
from agrag.components.data_models.fact import Fact
from agrag.components.embedders.embedding_texts import fact_keyword_text
from agrag.components.embedders.fact_vectors import fact_vector
from agrag.components.stores.graph_read_roles import GraphRetrievalReader
from agrag.components.stores.vector_payloads import fact_payload
from agrag.components.stores.vector_store import VectorPoint, VectorStore


def extraction_facts(
    extraction: Extraction, graph: GraphRetrievalReader | None = None, chunk_ids: set[str] | None = None
) -> list[Fact]:
    """The relations of ``extraction`` that some chunk states, as facts named by their entity records, by id.

    A relation found in several chunks is one fact with all of them (its first sentence kept, as the graph keeps
    it). An end the extraction does not list is named from ``graph`` (an entity an earlier run stored). With
    ``chunk_ids``, only relations one of those chunks states (a resumed run writes only the chunks it has left).
    """
    names = {e.id: e.name for e in extraction.entities}
    by_id: dict[str, Fact] = {}
    for relation in extraction.relations:
        if not relation.chunk_ids or (chunk_ids is not None and chunk_ids.isdisjoint(relation.chunk_ids)):
            continue
        known = by_id.get(relation.id)
        if known is not None:
            stating = tuple(dict.fromkeys((*known.chunk_ids, *relation.chunk_ids)))
            by_id[relation.id] = replace(known, chunk_ids=stating)
            continue
        by_id[relation.id] = Fact(
            relation.id,
            relation.source_id,
            names.get(relation.source_id, ""),
            relation.type,
            relation.target_id,
            names.get(relation.target_id, ""),
            relation.description,
            tuple(relation.chunk_ids),
        )
    unnamed = sorted({e for f in by_id.values() for e in (f.source_id, f.target_id) if e not in names})
    if unnamed and graph is not None:
        names.update({e.id: e.name for e in graph.get_entities(unnamed)})
        by_id = {
            i: replace(f, source=names.get(f.source_id, ""), target=names.get(f.target_id, ""))
            for i, f in by_id.items()
        }
    return [by_id[i] for i in sorted(by_id)]


def stored_vectors(
    store: VectorStore, ids: Sequence[str], known: Sequence[VectorPoint] = ()
) -> dict[str, Sequence[float]]:
    """The dense vector of each of ``ids``: from ``known`` (points not written yet), else as ``store`` holds it."""
    vectors: dict[str, Sequence[float]] = {p.id: p.dense for p in known}
    missing = sorted(set(ids) - vectors.keys())
    vectors.update({p.id: p.dense for p in store.fetch(missing, with_vectors=True)} if missing else {})
    return vectors


def vector_of(
    chunk_ids: Sequence[str],
    source_id: str,
    target_id: str,
    passages: Mapping[str, Sequence[float]],
    ends: Mapping[str, Sequence[float]],
) -> array[float] | None:
    """A fact's vector (``fact_vector``): its first chunk (by id) ``passages`` holds, its ends in ``ends``."""
    passage = next((passages[c] for c in sorted(chunk_ids) if c in passages), None)
    return fact_vector(passage, [ends[e] for e in (source_id, target_id) if e in ends])


def fact_points(
    facts: Sequence[Fact], passages: Mapping[str, Sequence[float]], ends: Mapping[str, Sequence[float]]
) -> list[VectorPoint]:
    """The points of ``facts``: vectors made from their passages' and ends' (``vector_of``), no model run.

    Each point's keyword text is ``fact_keyword_text``, its payload ``fact_payload``. A fact with neither a passage
    nor an end vector gets no point.
    """
    points = []
    for fact in facts:
        vector = vector_of(fact.chunk_ids, fact.source_id, fact.target_id, passages, ends)
        if vector is not None:
            points.append(VectorPoint(fact.id, vector, fact_keyword_text(fact), fact_payload(fact)))
    return points
