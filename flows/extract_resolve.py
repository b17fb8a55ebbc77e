"""The extract, prune and resolve stages of an ingestion, as one step whose intermediate extractions end with it."""

from __future__ import annotations

from dataclasses import dataclass, replace

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Extraction
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.ontology import PrunedReport
from agrag.components.data_models.resolution import KEPT_APART, MERGED, Resolution
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.flows import ingest_tasks as tasks
from agrag.flows import plan_groups, write_tasks
from agrag.flows.ingest_report import IngestReport
from agrag.flows.ingest_tasks import Phase
from agrag.flows.plan_groups import PlanGroup
from agrag.flows.stage_clock import StageClock, as_is
from agrag.pipelines.config_models import AgragConfig, ResolutionConfig


@dataclass(frozen=True, slots=True)
class Resolved:
    """What the embed and write stages need from extraction and resolution.

    Attributes:
        report: The run's report with the extract, prune and resolve results.
        resolution: The resolved extraction and the decisions.
        phase: The phase the resolution is journaled under (the write's commit batches point at it).
        merged: Ids of the entities merged into another.
        new_entities: Resolved entities that have no vector yet.
        reused: Documents whose extraction and resolution were read back from the journal, by stage.
    """

    report: IngestReport
    resolution: Resolution
    phase: Phase
    merged: set[str]
    new_entities: list[Entity]
    reused: dict[str, int]


def extract_and_resolve(
    report: IngestReport,
    clock: StageClock,
    changed: list[LoadedDocument],
    chunks: list[Chunk],
    *,
    groups: list[PlanGroup],
    resolution: ResolutionConfig,
    config: AgragConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    llm: OpenAIChatClient | None,
    progress: bool,
) -> Resolved:
    """Extract per plan group, prune to the ontology and resolve once over the batch.

    The raw and the pruned extraction are this function's own, so they are freed as it returns: at 1,000,000 chunks
    each holds gigabytes, and the embed and write stages need only the resolved one. The resolution is journaled
    unless the run will be written by one bulk load (``write_tasks.writes_in_bulk``).
    """
    ingest = config.ingest
    journal = store.journal
    assert journal is not None  # checked by ingest_into
    model = llm.model if llm is not None else None
    extracted = clock.run(
        "extract",
        lambda: plan_groups.extract_groups(groups, chunks, llm, journal, progress=progress, control=clock.control),
    )
    raw, failures = extracted.value.extraction, extracted.value.failures
    report = replace(report, extraction_failures=tuple(failures), llm_estimate=extracted.value.estimate)
    clock.completed("extract", replace(report, pruned=_unpruned(raw)))
    kept, pruned = clock.run("prune", lambda: tasks.prune_to_ontology(as_is(raw), ingest))
    report = replace(report, pruned=pruned)
    clock.completed("prune", report)
    phase = Phase(journal, plan_groups.resolve_hash(groups, resolution, config, model))
    bulk = write_tasks.writes_in_bulk(store, len(chunks), ingest.bulk_load_min_chunks)
    resolved = clock.run(
        "resolve",
        lambda: tasks.resolve_entities(
            as_is(changed), as_is(kept), resolution, store, embedder, llm=as_is(llm), phase=phase, journal=not bulk
        ),
    )
    out = resolved.value
    extraction = out.extraction
    merged = {d.member_id for d in out.decisions if d.decision == MERGED}
    known = store.entities.existing_ids([e.id for e in extraction.entities])
    new_entities = [e for e in extraction.entities if e.id not in known]
    report = replace(
        report,
        entities_found=len(extraction.entities),
        entities_new=len(new_entities),
        relations_found=len(extraction.relations),
        merges=len(merged),
        kept_apart=sum(d.decision == KEPT_APART for d in out.decisions),
        candidates=len(out.candidates),
    )
    clock.completed("resolve", report)
    return Resolved(report, out, phase, merged, new_entities, {"extract": extracted.reused, "resolve": resolved.reused})


def _unpruned(extraction: Extraction) -> PrunedReport:
    """What the extract stage found, before the ontology prunes it (the extract line counts all of it)."""
    return PrunedReport(
        entities_kept=len({e.id for e in extraction.entities}),
        relations_kept=len({r.id for r in extraction.relations}),
    )
