"""The embed phase of ingestion: vectors for the searchable chunks and the new entities, journaled per document."""

from __future__ import annotations

from dataclasses import dataclass, field

from prefect import task
from prefect.cache_policies import NO_CACHE

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.embedders.embedding_texts import chunk_embedding_text, entity_embedding_text
from agrag.components.stores.vector_payloads import chunk_payload, entity_payload
from agrag.components.stores.vector_store import VectorPoint
from agrag.flows.embed_fanout import SliceEmbedder, embed_all, packed
from agrag.flows.ingest_control import IngestControl
from agrag.flows.ingest_tasks import Phase, PhaseOutput, document_key, document_runs, grouped_by_document


@dataclass(frozen=True, slots=True)
class EmbeddedPoints:
    """The vector points one ingest writes: searchable chunks, new entities, facts; where the chunks were embedded.

    The facts' vectors are made from the chunks' and entities' (``fact_points``), after those are embedded.
    """

    chunks: list[VectorPoint]
    entities: list[VectorPoint]
    embedded_on: str = ""
    facts: list[VectorPoint] = field(default_factory=list)


@task(name="embed", cache_policy=NO_CACHE, persist_result=False)
def embed(
    documents: list[LoadedDocument],
    chunks: list[Chunk],
    entities: list[Entity],
    merged: set[str],
    embedder: SliceEmbedder,
    *,
    phase: Phase,
    control: IngestControl | None = None,
) -> PhaseOutput[EmbeddedPoints]:
    """Embed the searchable chunks and the entities that have no vectors yet (merged ones too, for an undo).

    The chunks go to ``embedder`` in slices of whole documents; each slice's vectors are journaled per document as
    soon as they arrive (from this process or a Dask worker, in any order), so a killed run or worker loses only
    the slices in flight. ``control`` is checked between slices.
    """
    keys = {d.document.id: document_key(phase, "embed", d) for d in documents}
    done: dict[str, list[VectorPoint]] = {
        key.subject: value for key, value in phase.journal.load_many(list(keys.values())).items()
    }
    groups = grouped_by_document([c for c in chunks if c.searchable])
    todo = [d.document.id for d in documents if keys[d.document.id].subject not in done]
    runs = list(document_runs(todo, groups, embedder.slice_chunks))
    batches: list[list[Chunk]] = [[c for doc in run for c in groups.get(doc, [])] for run in runs]
    texts = [[chunk_embedding_text(c) for c in batch] for batch in batches]
    for index, vectors in embedder.embed_slices(texts, control):
        points = {
            c.id: VectorPoint(c.id, vector, text, chunk_payload(c))
            for c, vector, text in zip(batches[index], packed(vectors), texts[index], strict=True)
        }
        owned = {doc: [points[c.id] for c in groups.get(doc, [])] for doc in runs[index]}
        phase.journal.save_many([(keys[doc], own) for doc, own in owned.items()])
        done.update({keys[doc].subject: own for doc, own in owned.items()})
    chunk_points = [p for d in documents for p in done[keys[d.document.id].subject]]
    entity_texts = [entity_embedding_text(e) for e in entities]
    entity_points = [
        VectorPoint(e.id, vector, text, entity_payload(e, merged=e.id in merged))
        for e, vector, text in zip(entities, embed_all(embedder, entity_texts, control), entity_texts, strict=True)
    ]
    return PhaseOutput(EmbeddedPoints(chunk_points, entity_points, embedder.where), reused=len(documents) - len(todo))
